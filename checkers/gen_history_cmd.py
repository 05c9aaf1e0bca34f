"""``fencepost gen-history``: write a synthetic history for tests and benchmarks.

``--model register`` (the default) writes a register history (:mod:`checkers.gen_history`);
``--model list-append`` or ``rw-register`` a transactional one (:mod:`checkers.gen_history_txn`), with
``--anomalies N`` planting anomalies of the ``--anomaly-types`` named.
"""

from __future__ import annotations

import click

from harness.cli.errors import fail

MODELS = ("register", "list-append", "rw-register")


@click.command("gen-history")
@click.option("--model", type=click.Choice(MODELS), default="register", show_default=True,
              help="register operations, or list-append / rw-register transactions")
@click.option("--ops", type=int, default=None, help="register: operations (invocations) to generate")
@click.option("--txns", type=int, default=None, help="list-append, rw-register: transactions to generate")
@click.option("--keys", type=int, default=None,
              help="register: independent keys (default 1); transactions: active keys (default 8)")
@click.option("--processes", type=int, default=5, show_default=True, help="concurrent client processes")
@click.option("--txn-length", type=int, default=4, show_default=True,
              help="transactions: the most micro-ops in one transaction (each has 1 to this many)")
@click.option("--writes-per-key", type=int, default=16, show_default=True,
              help="transactions: writes after which a key retires and a fresh one takes its place")
@click.option("--unique-values", is_flag=True, help="register: every write writes a fresh value")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed (same seed, same history)")
@click.option("--anomalies", type=int, default=0, show_default=True,
              help="register: linearizability violations, each in a different key; transactions: anomalies "
                   "to plant, each on keys of its own")
@click.option("--anomaly-types", default=None,
              help="transactions: the classes to plant, comma-separated, in turn (default: all the model can "
                   "have: G0, G1a, G1b, G1c, G-single, G-nonadjacent, G2-item, G-single-realtime, lost-update, "
                   "internal, dirty-update, garbage-read; list-append also duplicate-elements, "
                   "incompatible-order, future-read)")
@click.option("--fail-rate", type=float, default=0.05, show_default=True,
              help="transactions: the share that fail (never applied)")
@click.option("--info-rate", type=float, default=0.01, show_default=True, help="fraction of ops ending info")
@click.option("--out", required=True, help="output file: JSONL (register: Parquet when it ends in .parquet)")
def gen_history(model: str, ops: int | None, txns: int | None, keys: int | None, processes: int,
                txn_length: int, writes_per_key: int, unique_values: bool, seed: int, anomalies: int,
                anomaly_types: str | None, fail_rate: float, info_rate: float, out: str) -> None:
    """Write a generated history to OUT, streaming."""
    if not 0 <= info_rate < 1:
        fail("--info-rate must be in [0, 1)")
    if model == "register":
        if ops is None:
            fail("--model register needs --ops")
        _registers(ops, 1 if keys is None else keys, processes, unique_values, seed, anomalies, info_rate, out)
        return
    if txns is None:
        fail(f"--model {model} needs --txns")
    if out.lower().endswith(".parquet"):
        fail("transactional histories are written as JSONL; name OUT .jsonl")
    _transactions(model, txns, 8 if keys is None else keys, processes, txn_length, writes_per_key, seed,
                  anomalies, anomaly_types, fail_rate, info_rate, out)


def _registers(ops: int, keys: int, processes: int, unique_values: bool, seed: int, anomalies: int,
               info_rate: float, out: str) -> None:
    """A register history of ``ops`` operations."""
    from checkers.gen_history import HistoryGenerator
    from harness.history.jsonl import write_jsonl

    try:
        gen = HistoryGenerator(ops, keys, processes, unique_values, seed, anomalies, info_rate)
    except ValueError as e:
        fail(str(e))
    if out.lower().endswith(".parquet"):
        from harness.history.parquet import write_parquet

        write_parquet(gen, out)  # row groups as they fill: never the whole history in memory
    else:
        write_jsonl(gen, out)  # streams: the generator never holds the history
    note = f", {len(gen.injected)} anomalies in keys {sorted(gen.injected)[:10]}" if anomalies else ""
    click.echo(f"wrote {ops} ops over {keys} keys to {out}{note}")
    if len(gen.injected) < anomalies:
        fail(f"only {len(gen.injected)} of {anomalies} anomalies could be injected: use more --ops")


def _transactions(model: str, txns: int, keys: int, processes: int, txn_length: int, writes_per_key: int,
                  seed: int, anomalies: int, anomaly_types: str | None, fail_rate: float, info_rate: float,
                  out: str) -> None:
    """A transactional history of ``txns`` transactions, with ``anomalies`` planted."""
    from checkers.gen_history_txn import TxnHistoryGenerator, write_txn_jsonl

    types = tuple(t.strip() for t in anomaly_types.split(",") if t.strip()) if anomaly_types else ()
    try:
        gen = TxnHistoryGenerator(model, txns, processes, txn_length, keys, writes_per_key, seed, fail_rate,
                                  info_rate, anomalies, types)
    except ValueError as e:
        fail(str(e))
    events = write_txn_jsonl(gen, out)
    click.echo(f"wrote {txns} {model} transactions ({events} events, {processes} processes) to {out}")
    for planted in gen.planted:
        first, last = planted.indices[0] + 1, planted.indices[-1] + 1
        click.echo(f"  planted {planted.type} at lines {first}-{last}, keys {', '.join(map(str, planted.keys))}")
