"""The report's "Anomalies" section for a transactional check: each anomaly in words, its cycle drawn.

The ``txn`` checker's result (:mod:`checkers.txn`, shape in docs/transactions.md) names every anomaly
found, the prohibited ones apart from those the checked models allow ("also seen"). This module turns it
into what ``templates/_txn.html.j2`` shows, prohibited types first: per anomaly its one-line summary, a
drawing of its cycle (:mod:`reports.cycle_drawing`; non-cycle anomalies such as G1a have none), the
sentences that explain it and a table of its transactions with their process, times, history lines,
micro-ops and the faults in force while they ran. Only the first :data:`DRAWN` anomalies of a type are
shown in full; the next ones are listed by their summaries, the rest counted.

Reading never raises on an odd shape: a piece that is missing or of the wrong type is left out.
:func:`write_txn_report` writes the same section as a page of its own, for a history checked outside a run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkers.txn import words
from harness.history.faults import FaultWindow, fault_windows
from harness.history.op import Op
from reports.cycle_drawing import CycleDrawing, EdgeSpec, draw_cycle
from reports.run_view import Verdict, verdict_of
from reports.templating import environment

CHECKER = "txn"
"""The name of the transactional checker's result in results.json."""
DRAWN = 5
"""How many anomalies of one type are shown in full (drawing, sentences, table)."""
LISTED = 20
"""How many more of one type are listed by their summary alone."""
MAX_DRAWN_TXNS = 24
"""A longer cycle is explained but not drawn."""
EDGE_KINDS = {"ww": "write-write: the second overwrote the first's write",
              "wr": "write-read: the second read what the first wrote",
              "rw": "read-write (anti-dependency): the first read a version the second overwrote",
              "process": "process order: the same process ran the second after the first",
              "realtime": "real-time order: the second began after the first completed"}

ANOMALY_WORDS = {
    "G0": "write cycle: transactions overwrote one another's writes (ww edges only)",
    "G1a": "aborted read: a committed transaction read a write of one that failed",
    "G1b": "intermediate read: a transaction read a value its writer overwrote later in the same transaction",
    "G1c": "circular information flow: a cycle of ww and wr edges",
    "G-single": "read skew: a cycle with exactly one anti-dependency (rw edge)",
    "G-nonadjacent": "a cycle with several rw edges, no two of them adjacent",
    "G2-item": "anti-dependency cycle: a cycle with rw edges (write skew is one)",
    "internal": "a transaction's read contradicts its own earlier micro-ops",
    "dirty-update": "a committed write built on a write that failed",
    "lost-update": "two transactions read the same version of a key and both wrote it",
    "duplicate-elements": "a read holds the same appended element twice",
    "incompatible-order": "two reads of a key disagree on its order: neither is a prefix of the other",
    "garbage-read": "a read saw a value nobody wrote",
    "future-read": "a transaction read its own write before making it",
}
"""What each anomaly type means, in a line; the -process and -realtime variants add that order."""


def anomaly_words(kind: str) -> str:
    """The line for ``kind`` (``G-single-realtime``: G-single's, counting real-time order); empty if unknown."""
    for suffix, extra in (("-process", "process"), ("-realtime", "real-time")):
        if kind.endswith(suffix) and kind[: -len(suffix)] in ANOMALY_WORDS:
            return f"{ANOMALY_WORDS[kind[: -len(suffix)]]}, counting {extra} order"
    return ANOMALY_WORDS.get(kind, "")


def edn(value: Any, limit: int = 120) -> str:
    """A key or value as the checker's explanations write it (``[1 2]``, ``nil``), cut at ``limit`` characters."""
    text = words.value(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def key_text(key: Any) -> str:
    """A key for an edge's label: ``k4`` for the integer 4, else the key as written, cut short."""
    if isinstance(key, int) and not isinstance(key, bool):
        return f"k{key}"
    return edn(key, 24)


def edge_label(edge: Mapping[str, Any]) -> str:
    """An edge's label: its type and, for data edges, its key ("rw k4")."""
    kind = str(edge.get("type", "?"))
    return f"{kind} {key_text(edge['key'])}" if edge.get("key") is not None else kind


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _seconds(ns: Any, digits: int = 3) -> str:
    t = _num(ns)
    return "—" if t is None else f"{t / 1e9:.{digits}f}"


def digits_for(times: Sequence[Any]) -> int:
    """The fewest decimals of a second, from 3 to 9, that keep ``times`` (ns) apart as they are apart."""
    known = {t for t in (_num(x) for x in times) if t is not None}
    digits = 3
    while digits < 9 and len({round(t / 1e9, digits) for t in known}) < len(known):
        digits += 1
    return digits


@dataclass(frozen=True)
class MicroOp:
    """One micro-op as text, and whether its key is one the anomaly's edges name."""

    text: str
    marked: bool


@dataclass(frozen=True)
class TxnRow:
    """One transaction of an anomaly, for its table."""

    id: str
    label: str
    process: str
    type: str
    invoke_s: str
    complete_s: str
    lines: str
    ops: list[MicroOp]
    faults: list[str]


@dataclass(frozen=True)
class AnomalyView:
    """One anomaly: summary, cycle drawing (None for a non-cycle anomaly), sentences, transactions."""

    type: str
    anchor: str
    summary: str
    drawing: CycleDrawing | None
    cycle_length: int
    sentences: list[str]
    txns: list[TxnRow]
    edge_kinds: list[str]


@dataclass(frozen=True)
class AnomalyGroup:
    """Every anomaly of one type: the first few in full, the next listed, the rest counted."""

    type: str
    anchor: str
    prohibited: bool
    total: int
    words: str
    shown: list[AnomalyView]
    listed: list[str]
    explained: int
    """How many the result explains (the checker may count more than it explains)."""

    @property
    def unlisted(self) -> int:
        """How many are neither shown nor listed."""
        return max(0, self.total - len(self.shown) - len(self.listed))


@dataclass
class TxnSection:
    """The whole section: what was checked and the anomaly groups, prohibited first."""

    verdict: Verdict
    workload: str
    consistency: list[str]
    counts: dict[str, Any]
    ruled_out: list[str]
    groups: list[AnomalyGroup] = field(default_factory=list)
    source: str | None = None
    faults_known: bool = False
    unknown_reasons: list[str] = field(default_factory=list)
    edge_kinds: dict[str, str] = field(default_factory=lambda: dict(EDGE_KINDS))

    @property
    def prohibited(self) -> list[AnomalyGroup]:
        """The groups the checked models prohibit."""
        return [g for g in self.groups if g.prohibited]

    @property
    def also_seen(self) -> list[AnomalyGroup]:
        """The groups found but allowed by every checked model."""
        return [g for g in self.groups if not g.prohibited]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _anchor(*parts: Any) -> str:
    return "anomaly-" + "-".join("".join(ch if ch.isalnum() else "-" for ch in str(p)) for p in parts)


def _txn_id(txn: Any) -> Any:
    return txn.get("id") if isinstance(txn, Mapping) else txn


def _txn_row(txn: Mapping[str, Any], keys: set[Any], windows: Sequence[FaultWindow], digits: int) -> TxnRow:
    ident = txn.get("id")
    process = txn.get("process")
    ops: list[MicroOp] = []
    for mop in txn.get("ops") or []:
        if isinstance(mop, (list, tuple)) and len(mop) == 3:
            f, k, v = mop
            ops.append(MicroOp(f"[{f} {edn(k, 40)} {edn(v)}]", _hashable(k) and k in keys))
        else:
            ops.append(MicroOp(edn(mop), False))
    given = txn.get("lines")
    raw_lines: list[Any] = given if isinstance(given, list) else []
    if any(n is not None for n in raw_lines):
        lines = ["?" if n is None else str(n) for n in raw_lines]
    else:  # read from memory, not a file: the ops' indexes stand in
        lines = [f"#{i}" for i in (txn.get("invoke_index"), txn.get("complete_index")) if i is not None]
    start, end = _num(txn.get("invoke_time")), _num(txn.get("complete_time"))
    faults: list[str] = []
    if start is not None:
        stop = end if end is not None else float("inf")
        faults = sorted({w.fault for w in windows if w.start <= stop and w.end >= start})
    return TxnRow(str(ident), f"T{ident}", "?" if process is None else str(process), str(txn.get("type", "?")),
                  _seconds(start, digits), _seconds(end, digits), ", ".join(lines), ops, faults)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _drawing(cycle: list[Mapping[str, Any]], rows: Mapping[str, TxnRow]) -> CycleDrawing | None:
    ids = [str(_txn_id(step.get("txn"))) for step in cycle]
    order = list(dict.fromkeys(ids))
    if not order or len(order) > MAX_DRAWN_TXNS:
        return None
    at = {t: i for i, t in enumerate(order)}
    edges: list[EdgeSpec] = []
    for i, step in enumerate(cycle):
        edge = step.get("edge")
        if not isinstance(edge, Mapping):
            continue
        target = str(edge.get("to")) if edge.get("to") is not None else ids[(i + 1) % len(ids)]
        target = target if target in at else ids[(i + 1) % len(ids)]
        edges.append(EdgeSpec(at[ids[i]], at[target], str(edge.get("type", "?")), edge_label(edge),
                              str(edge.get("explanation") or "")))
    labels = [f"{rows[t].label} (p{rows[t].process})" if t in rows else f"T{t}" for t in order]
    titles = [" ".join(op.text for op in rows[t].ops) if t in rows else "" for t in order]
    return draw_cycle(labels, edges, titles=titles, keys=order)


def anomaly_view(anomaly: Mapping[str, Any], kind: str, number: int,
                 windows: Sequence[FaultWindow] = ()) -> AnomalyView:
    """One anomaly of the checker's result, ready to show (``number`` counts from 1 within its type)."""
    raw_cycle = anomaly.get("cycle")
    cycle = [s for s in raw_cycle if isinstance(s, Mapping)] if isinstance(raw_cycle, list) else []
    edges = [s["edge"] for s in cycle if isinstance(s.get("edge"), Mapping)]
    named = [e.get("key") for e in edges] + [anomaly.get("key")]  # a non-cycle anomaly may name its key
    keys = {k for k in named if k is not None and _hashable(k)}
    txns: list[Mapping[str, Any]] = [t for t in anomaly.get("txns") or [] if isinstance(t, Mapping)]
    known = {str(t.get("id")) for t in txns}
    txns += [s["txn"] for s in cycle if isinstance(s.get("txn"), Mapping) and str(s["txn"].get("id")) not in known]
    digits = digits_for([t.get(k) for t in txns for k in ("invoke_time", "complete_time")])
    rows = {r.id: r for r in (_txn_row(t, keys, windows, digits) for t in txns)}
    sentences = _strings(anomaly.get("explanation")) or [str(e["explanation"]) for e in edges if e.get("explanation")]
    return AnomalyView(
        type=kind, anchor=_anchor(kind, number), summary=str(anomaly.get("summary") or kind),
        drawing=_drawing(cycle, rows) if cycle else None, cycle_length=len(cycle), sentences=sentences,
        txns=list(rows.values()), edge_kinds=sorted({str(e.get("type")) for e in edges}))


def _group(kind: str, found: Any, counted: Any, prohibited: bool, windows: Sequence[FaultWindow]) -> AnomalyGroup:
    items = [a for a in found if isinstance(a, Mapping)] if isinstance(found, list) else []
    shown = [anomaly_view(a, kind, i + 1, windows) for i, a in enumerate(items[:DRAWN])]
    listed = [str(a.get("summary") or kind) for a in items[DRAWN:DRAWN + LISTED]]
    total = max(len(items), int(counted) if isinstance(counted, int) and not isinstance(counted, bool) else 0)
    return AnomalyGroup(kind, _anchor(kind), prohibited, total, anomaly_words(kind), shown, listed, len(items))


def txn_section(result: Mapping[str, Any], *, history: Sequence[Op] | None = None,
                source: str | None = None) -> TxnSection | None:
    """The section for a ``txn`` checker's result; None when it found no anomaly.

    Args:
        result: the checker's result dict.
        history: the checked history, if at hand: its nemesis ops say which faults were in force.
        source: the history's file name, for the transactions' lines.
    """
    raw = result.get("anomalies")
    anomalies: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    raw_counts = result.get("counts")
    counted: Mapping[str, Any] = raw_counts if isinstance(raw_counts, Mapping) else {}
    found = {str(t) for t, v in anomalies.items() if v} | {str(t) for t, n in counted.items() if n}
    if not found:
        return None
    windows = fault_windows(history) if history else []
    prohibited = _strings(result.get("prohibited"))
    listed = prohibited + [t for t in _strings(result.get("also_seen")) if t not in prohibited]
    order = [t for t in listed if t in found] + sorted(found - set(listed))
    counts = {k: result[k] for k in ("txns", "ok", "fail", "info") if k in result}
    return TxnSection(
        verdict=verdict_of(result.get("valid", result.get("valid?"))),
        workload=str(result.get("workload") or "transactions"),
        consistency=_strings(result.get("consistency")), counts=counts, ruled_out=_strings(result.get("not")),
        groups=[_group(t, anomalies.get(t), counted.get(t), t in prohibited, windows) for t in order],
        source=source, faults_known=bool(windows), unknown_reasons=_strings(result.get("unknown_reasons")))


def section_for_run(checkers: Mapping[str, Mapping[str, Any]], history: Sequence[Op] | None,
                    notes: list[str]) -> TxnSection | None:
    """The section for a run whose results hold a ``txn`` result with anomalies, else None; a result the
    section cannot be built from becomes a note instead."""
    result = checkers.get(CHECKER)
    if not isinstance(result, Mapping):
        return None
    try:
        return txn_section(result, history=history, source="history.jsonl")
    except Exception as e:  # a view: an odd result must never cost the report
        notes.append(f"the report could not show the txn anomalies: {type(e).__name__}: {e}")
        return None


def render_txn_page(result: Mapping[str, Any], *, source: str | None = None,
                    history: Sequence[Op] | None = None) -> str:
    """A standalone HTML page for one checked history: its verdict, then its anomalies."""
    section = txn_section(result, history=history, source=source)
    return environment().get_template("txn_report.html.j2").render(
        s=section, r=result, source=source, verdict=verdict_of(result.get("valid", result.get("valid?"))))


def write_txn_report(result: Mapping[str, Any], out_path: str | Path, *, source: str | None = None,
                     history: Sequence[Op] | None = None) -> Path:
    """Write :func:`render_txn_page`'s page to ``out_path`` (atomically) and return its path.

    Args:
        result: what :func:`checkers.txn.check_txn` returned.
        out_path: the page to write; its folder must exist.
        source: the history's file name, shown in the title and beside the history lines.
        history: the ops checked, if at hand, for the faults in force during each transaction.
    """
    out = Path(out_path)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    tmp.write_text(render_txn_page(result, source=source, history=history), encoding="utf-8")
    os.replace(tmp, out)
    return out
