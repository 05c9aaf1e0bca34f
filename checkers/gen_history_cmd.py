"""``fencepost gen-history``: write a synthetic register history for tests and benchmarks."""

from __future__ import annotations

import click

from harness.cli.errors import fail


@click.command("gen-history")
@click.option("--ops", type=int, required=True, help="operations (invocations) to generate")
@click.option("--keys", type=int, default=1, show_default=True, help="independent keys")
@click.option("--processes", type=int, default=5, show_default=True, help="concurrent client processes")
@click.option("--unique-values", is_flag=True, help="every write writes a fresh value")
@click.option("--seed", type=int, default=0, show_default=True, help="random seed (same seed, same history)")
@click.option("--anomalies", type=int, default=0, show_default=True,
              help="linearizability violations to inject, each in a different key")
@click.option("--info-rate", type=float, default=0.01, show_default=True, help="fraction of ops ending info")
@click.option("--out", required=True, help="output file: JSONL, or Parquet when it ends in .parquet")
def gen_history(ops: int, keys: int, processes: int, unique_values: bool, seed: int, anomalies: int,
                info_rate: float, out: str) -> None:
    """Write a generated register history of OPS operations to OUT, streaming."""
    from checkers.gen_history import HistoryGenerator
    from harness.history.jsonl import write_jsonl

    if not 0 <= info_rate < 1:
        fail("--info-rate must be in [0, 1)")
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
