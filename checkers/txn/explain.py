"""Anomalies in words and as JSON-ready data: each transaction with its process, times and history lines, each
edge of a cycle in one sentence, and a plain-text rendering for the CLI."""

from __future__ import annotations

from typing import Any

from checkers.txn import words
from checkers.txn.cycles import Found, Step
from checkers.txn.inference import EDGE_NAMES, PROCESS, REALTIME, Case, Inference
from checkers.txn.txns import KIND_NAMES, TxnTable

_T = words.t


def txn_dict(table: TxnTable, tid: int, source: str | None) -> dict[str, Any]:
    """The contract's TXN: a transaction with its process, outcome, times, indices, lines and micro-ops."""
    inv = table.invoke_op(tid)
    done = table.complete_op(tid)
    lines = [table.line_of(int(table.invoke_pos[tid])), table.line_of(int(table.complete_pos[tid]))]
    return {
        "id": tid,
        "process": inv.process,
        "type": KIND_NAMES[int(table.kind[tid])],
        "invoke_time": inv.time,
        "complete_time": done.time if done is not None else None,
        "invoke_index": inv.index,
        "complete_index": done.index if done is not None else None,
        "lines": lines,
        "ops": table.mops(tid),
        "label": label(table, tid, source),
    }


def label(table: TxnTable, tid: int, source: str | None) -> str:
    """``T12 (process 3, ok, invoked 1.20 s, completed 1.31 s; history.jsonl:25, 31)``."""
    inv = table.invoke_op(tid)
    done = table.complete_op(tid)
    kind = KIND_NAMES[int(table.kind[tid])]
    times = f"invoked {words.seconds(inv.time)}"
    if done is not None:
        times += f", {'completed' if kind == 'ok' else kind} {words.seconds(done.time, inv.time)}"
    else:
        times += ", never completed"
    lines = [table.line_of(int(table.invoke_pos[tid])), table.line_of(int(table.complete_pos[tid]))]
    where = ""
    known = [str(x) for x in lines if x]
    if known:
        where = f"; {source + ':' if source else 'line '}{', '.join(known)}"
    else:
        where = f"; ops {inv.index}" + (f", {done.index}" if done is not None else "")
    return f"{_T(tid)} (process {inv.process}, {kind}, {times}{where})"


def order_sentence(table: TxnTable, step: Step) -> str:
    """A process or real-time edge in one sentence."""
    a, b = step.src, step.dst
    done = int(table.complete_time[a])
    began = int(table.invoke_time[b])
    if step.etype == REALTIME:
        return (f"{_T(a)} completed at {words.seconds(done, began)} before {_T(b)} was invoked at "
                f"{words.seconds(began, done)}; so {_T(a)} realtime→ {_T(b)}")
    return (f"{_T(a)} and {_T(b)} ran on process {table.invoke_op(a).process}, {_T(b)} after {_T(a)}; "
            f"so {_T(a)} process→ {_T(b)}")


def step_sentence(table: TxnTable, inference: Inference, step: Step) -> str:
    """Why one logical edge of a cycle exists."""
    if step.etype in (PROCESS, REALTIME):
        return order_sentence(table, step)
    return inference.explain_edge(table, step.src, step.dst, step.etype, step.key)


def cycle_entry(table: TxnTable, inference: Inference, keys: list[Any], found: Found,
                source: str | None) -> dict[str, Any]:
    """A cycle anomaly as the result carries it."""
    cycle = []
    sentences = []
    for step in found.steps:
        sentence = step_sentence(table, inference, step)
        sentences.append(sentence)
        edge: dict[str, Any] = {"type": EDGE_NAMES[step.etype], "to": step.dst, "explanation": sentence}
        if step.key >= 0:
            edge["key"] = keys[step.key]
        cycle.append({"txn": txn_dict(table, step.src, source), "edge": edge})
    chain = " ".join(f"{_T(s.src)} {EDGE_NAMES[s.etype]}→" for s in found.steps) + f" {_T(found.steps[0].src)}"
    return {
        "type": found.type,
        "summary": f"{found.type} cycle of {len(found.steps)} transactions: {chain}",
        "cycle": cycle,
        "txns": [c["txn"] for c in cycle],
        "explanation": sentences,
    }


def case_entry(table: TxnTable, case: Case, source: str | None) -> dict[str, Any]:
    """A non-cycle anomaly as the result carries it."""
    out: dict[str, Any] = {
        "type": case.type,
        "summary": case.summary,
        "txns": [txn_dict(table, t, source) for t in case.txns],
        "explanation": list(case.explanation),
    }
    out.update({k: v for k, v in case.data.items() if k not in out})
    return out


def render_text(result: dict[str, Any], limit: int = 3) -> str:
    """The result's anomalies as indented plain text (prohibited ones first), at most ``limit`` per type."""
    out: list[str] = []
    order = list(result.get("prohibited", [])) + list(result.get("also_seen", []))
    for kind in order:
        entries = result.get("anomalies", {}).get(kind, [])
        total = result.get("counts", {}).get(kind, len(entries))
        tag = "" if kind in result.get("prohibited", []) else " (allowed by the models checked)"
        out.append(f"  {kind}: {total} found{tag}")
        for entry in entries[:limit]:
            out.append(f"    {entry['summary']}")
            for sentence in entry["explanation"]:
                out.append(f"      - {sentence}")
            for txn in entry["txns"]:
                out.append(f"      {txn['label']}")
        if len(entries) > limit:
            out.append(f"    ... and {total - limit} more")
    if result.get("not"):
        stronger = len(result.get("also_not", []))
        out.append(f"  rules out: {', '.join(result['not'])}"
                   + (f", and the {stronger} models stronger than that" if stronger else ""))
    return "\n".join(out)
