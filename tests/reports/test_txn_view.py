"""The report's Anomalies section, from the real checker's results on a small hand-written list-append
history: first in the page, each cycle drawn with one box per transaction and one labelled arrow per edge,
non-cycle anomalies without a drawing, nothing for a clean check, odd keys and values escaped."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from markupsafe import escape

from checkers.stats import StatsChecker
from checkers.txn import TxnChecker, check_txn
from harness.checker_protocol import CheckContext, run_checkers
from harness.history.op import NEMESIS, Op, OpType
from harness.store import RunStore
from reports.render import write_report
from reports.txn_view import DRAWN, edge_label, write_txn_report
from tests.reports.browser import find_chromium, load_page

SVG = "{http://www.w3.org/2000/svg}"
S = 1_000_000_000


def history(txns: list[tuple[Any, ...]]) -> list[Op]:
    """Ops for ``(process, invoked micro-ops, completed micro-ops, outcome, invoked s, completed s)`` rows,
    with a partition from 3 s to 5 s, each op on its own line."""
    events: list[tuple[float, int, Any, str, str, Any]] = [
        (3.0, 0, NEMESIS, "invoke", "start-partition", None), (3.0, 1, NEMESIS, "info", "start-partition", None),
        (5.0, 0, NEMESIS, "invoke", "stop-partition", None), (5.0, 1, NEMESIS, "info", "stop-partition", None)]
    for process, invoked, done, outcome, t0, t1 in txns:
        events += [(t0, 0, process, "invoke", "txn", invoked), (t1, 1, process, outcome, "txn", done)]
    events.sort(key=lambda e: (e[0], e[1]))
    return [Op(index=i, time=int(t * S), process=p, type=OpType(kind), f=f, value=v, extra={"line": i + 1})
            for i, (t, _, p, kind, f, v) in enumerate(events)]


def append_txn(process: int, done: list[list[Any]], t0: float, t1: float, outcome: str = "ok") -> tuple[Any, ...]:
    invoked = [[f, k, None if f == "r" else v] for f, k, v in done]
    return (process, invoked, done if outcome == "ok" else invoked, outcome, t0, t1)


ODD_KEY, ODD_KEY2 = '<b>&"k\'</b>', "x&y"
ODD_VALUE, ODD_VALUE2 = "<script>alert(1)</script>", 'a"b'
TXNS = [
    append_txn(0, [["r", 5, []], ["append", 4, 1]], 1.0, 1.5),  # T0, T1: write skew (G2-item)
    append_txn(1, [["r", 4, []], ["append", 5, 1]], 1.1, 1.6),
    append_txn(2, [["r", 6, []], ["r", 8, [1]]], 2.0, 2.6),  # T2, T3, T4: G-single of three
    append_txn(3, [["append", 6, 1], ["append", 7, 1]], 2.1, 2.5),
    append_txn(4, [["r", 7, [1]], ["append", 8, 1]], 2.2, 3.4),
    append_txn(5, [["append", 9, 1]], 3.5, 3.6, outcome="fail"),  # T5, T6: G1a, in the partition
    append_txn(6, [["r", 9, [1]]], 3.7, 3.8),
    append_txn(7, [["r", ODD_KEY, []], ["append", ODD_KEY2, ODD_VALUE]], 6.0, 6.5),  # T7, T8: odd keys
    append_txn(8, [["r", ODD_KEY2, []], ["append", ODD_KEY, ODD_VALUE2]], 6.1, 6.6),
    append_txn(9, [*(["r", k, [1]] for k in (4, 5, 6, 7, 8)), ["r", ODD_KEY, [ODD_VALUE2]],
                   ["r", ODD_KEY2, [ODD_VALUE]]], 8.0, 8.1),
]


@pytest.fixture(scope="module")
def ops() -> list[Op]:
    return history(TXNS)


@pytest.fixture(scope="module")
def strict(ops: list[Op]) -> dict[str, Any]:
    """The real checker's result: everything found is prohibited."""
    return check_txn(ops, "list-append", ["strict-serializable"], source="h.jsonl")


def by_summary(result: dict[str, Any], kind: str, txn_ids: set[int]) -> dict[str, Any]:
    """The anomaly of ``kind`` among exactly these transactions."""
    found = [a for a in result["anomalies"][kind] if {t["id"] for t in a["txns"]} == txn_ids]
    assert len(found) == 1, result["anomalies"].get(kind)
    return found[0]


def expected_drawing(anomaly: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """What a cycle's drawing must hold, from the result: a box per transaction, an arrow per edge."""
    boxes = [f"T{s['txn']['id']} (p{s['txn']['process']})" for s in anomaly["cycle"]]
    arrows = [(s["edge"]["type"], edge_label(s["edge"])) for s in anomaly["cycle"]]
    return boxes, arrows


def section(html: str) -> str:
    m = re.search(r'<section id="anomalies".*?</section>', html, re.S)
    assert m, "no Anomalies section"
    return m.group(0)


def anomalies(html: str) -> dict[str, str]:
    """Each anomaly's HTML by its anchor."""
    return dict(re.findall(r'<div class="anomaly[^"]*" id="([^"]+)".*?>(.*?)\n</div>', section(html), re.S))


def drawing(fragment: str) -> ET.Element | None:
    m = re.search(r"<svg.*?</svg>", fragment, re.S)
    return ET.fromstring(m.group(0)) if m else None  # also proves the SVG is well-formed XML


def boxes_and_arrows(svg: ET.Element) -> tuple[list[str], list[tuple[str, str]]]:
    boxes = [g.findtext(f"{SVG}text") or "" for g in svg.iter(f"{SVG}g") if g.get("class") == "txn"]
    arrows = [(g.get("data-type") or "", g.findtext(f"{SVG}text") or "") for g in svg.iter(f"{SVG}g")
              if g.get("class") == "edge"]
    for g in svg.iter(f"{SVG}g"):
        if g.get("class") == "edge":
            path = g.find(f"{SVG}path")
            assert path is not None and path.get("marker-end", "").startswith("url(#")
    return boxes, arrows


def part_for(html: str, anomaly: dict[str, Any]) -> str:
    """The HTML of the anomaly whose summary is ``anomaly``'s."""
    found = [p for p in anomalies(html).values() if escape(anomaly["summary"]) in p]
    assert len(found) == 1, anomaly["summary"]
    return found[0]


def checked_run(store: RunStore, ops: list[Op], consistency: str) -> str:
    """A run of ``ops`` checked by the txn checker as a run checks it; its report's HTML."""
    config = {"name": "txn", "workload": "list-append", "nemesis": ["partition"], "consistency": consistency}
    run = store.create_run("txn", config)
    with run.history_writer() as writer:
        for op in ops:
            writer.write(op)
    results = run_checkers([TxnChecker("list-append", [consistency]), StatsChecker()], ops,
                           CheckContext(test=config, run_dir=run.path))
    run.write_results(results)
    return write_report(run.path, draw=False).read_text(encoding="utf-8")


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "store")


def test_an_invalid_check_opens_the_report_with_its_anomalies(store: RunStore, ops: list[Op]) -> None:
    html = checked_run(store, ops, "read-committed")
    result = json.loads(next(store.root.glob("txn/*/results.json")).read_text(encoding="utf-8"))["checkers"]["txn"]
    assert result["prohibited"] == ["G1a"] and set(result["also_seen"]) == {"G-single", "G2-item"}
    body = html[html.index("</div>", html.index('id="verdict"')):]
    first_heading = re.search(r"<h2[^>]*>([^<]+)", body)
    assert first_heading and first_heading.group(1) == "Anomalies"
    sec = section(html)
    order = re.findall(r'class="anomaly-type" id="anomaly-([^"]+)"', sec)
    assert order == result["prohibited"] + result["also_seen"]  # prohibited first, then also seen
    assert sec.index('id="anomaly-G1a"') < sec.index("Also seen</h3>") < sec.index('id="anomaly-G-single"')
    assert 'href="#anomalies"' in html  # the txn card points up to it


def test_each_cycle_is_drawn_with_a_box_per_transaction_and_an_arrow_per_edge(store: RunStore, ops: list[Op],
                                                                              strict: dict[str, Any]) -> None:
    html = checked_run(store, ops, "strict-serializable")
    cycles = [a for found in strict["anomalies"].values() for a in found if a.get("cycle")]
    assert len(cycles) >= 3
    for anomaly in cycles:
        svg = drawing(part_for(html, anomaly))
        assert svg is not None
        assert boxes_and_arrows(svg) == expected_drawing(anomaly)
    three = drawing(part_for(html, by_summary(strict, "G-single", {2, 3, 4})))
    assert three is not None
    boxes, arrows = boxes_and_arrows(three)
    assert sorted(boxes) == ["T2 (p2)", "T3 (p3)", "T4 (p4)"]
    assert sorted(arrows) == [("rw", "rw k6"), ("wr", "wr k7"), ("wr", "wr k8")]
    pair = drawing(part_for(html, by_summary(strict, "G2-item", {0, 1})))
    assert pair is not None
    paths = [p.get("d") for p in pair.iter(f"{SVG}path") if p.get("fill") == "none"]
    assert len(paths) == 2 and len(set(paths)) == 2  # the pair's two edges bow apart


def test_a_cycles_table_gives_times_lines_micro_ops_and_faults(store: RunStore, ops: list[Op],
                                                               strict: dict[str, Any]) -> None:
    anomaly = by_summary(strict, "G-single", {2, 3, 4})
    part = part_for(checked_run(store, ops, "strict-serializable"), anomaly)
    table = part[part.index("<table"):]
    rows = {m[0]: m for m in re.findall(
        r'<td class="mono">(T\d+)</td><td class="mono">(\d+)</td><td>(\w+)</td><td class="num">([\d.]+)</td>'
        r'<td class="num">([\d.]+)</td><td class="mono">([^<]*)</td>\s*<td class="mono">(.*?)</td><td>([^<]*)</td>',
        table, re.S)}
    assert sorted(rows) == ["T2", "T3", "T4"]
    assert rows["T2"][1:6] == ("2", "ok", "2.000", "2.600", ", ".join(str(n) for n in
                                                                      by_id(anomaly, 2)["lines"]))
    assert rows["T2"][6] == "<strong>[r 6 []]</strong> <strong>[r 8 [1]]</strong>"  # keys on the cycle's edges
    assert {t: r[7] for t, r in rows.items()} == {"T2": "none", "T3": "none", "T4": "partition"}  # 3 s to 5 s


def by_id(anomaly: dict[str, Any], tid: int) -> dict[str, Any]:
    return next(t for t in anomaly["txns"] if t["id"] == tid)


def test_a_drawing_fits_inside_its_viewbox(tmp_path: Path, strict: dict[str, Any]) -> None:
    page = write_txn_report(strict, tmp_path / "h.html").read_text(encoding="utf-8")
    svgs = [ET.fromstring(m) for m in re.findall(r"<svg.*?</svg>", page, re.S)]
    assert svgs
    for svg in svgs:
        _, _, width, height = (float(v) for v in (svg.get("viewBox") or "").split())
        assert width < 1000
        for rect in svg.iter(f"{SVG}rect"):
            x, y, w, h = (float(rect.get(a) or 0) for a in ("x", "y", "width", "height"))
            assert x >= 0 and y >= 0 and x + w <= width and y + h <= height


def test_a_non_cycle_anomaly_has_sentences_and_a_table_but_no_drawing(store: RunStore, ops: list[Op],
                                                                      strict: dict[str, Any]) -> None:
    g1a = by_summary(strict, "G1a", {5, 6})
    part = part_for(checked_run(store, ops, "strict-serializable"), g1a)
    assert drawing(part) is None
    assert g1a["explanation"] and all(escape(line) in part for line in g1a["explanation"])
    assert '<td class="mono">T5</td><td class="mono">5</td><td>fail</td>' in part
    assert part.count("<td>partition</td>") == 2


def test_a_clean_check_has_no_anomalies_section(store: RunStore) -> None:
    clean = history([append_txn(0, [["append", 1, 1]], 1.0, 1.1), append_txn(1, [["r", 1, [1]]], 2.0, 2.1)])
    html = checked_run(store, clean, "strict-serializable")
    assert 'id="anomalies"' not in html and "<svg" not in html
    assert "No anomalies." in html and 'data-verdict="valid"' in html


def test_only_the_first_few_of_a_type_are_drawn(tmp_path: Path, strict: dict[str, Any]) -> None:
    result = json.loads(json.dumps(strict))
    one = result["anomalies"]["G2-item"][0]
    result["anomalies"]["G2-item"] = [dict(one, summary=f"cycle number {i}") for i in range(DRAWN + 30)]
    result["counts"] = {"G2-item": DRAWN + 130, "G-nonadjacent": 2}  # counted beyond what is explained
    sec = section(write_txn_report(result, tmp_path / "h.html").read_text(encoding="utf-8"))
    g2 = sec[sec.index('id="anomaly-G2-item"'):]
    assert g2.count("<svg") == DRAWN
    assert "cycle number 5" in g2 and f"cycle number {DRAWN - 1}</p>" in g2
    assert f"… and 110 more G2-item not shown here (the checker explained {DRAWN + 30} of the {DRAWN + 130}" in g2
    assert 'class="anomaly-type" id="anomaly-G-nonadjacent"' in sec
    assert "The checker counted 2 but explained none." in sec


def test_odd_keys_and_values_are_escaped(tmp_path: Path, strict: dict[str, Any]) -> None:
    page = write_txn_report(strict, tmp_path / "h.html", source="h<1>.jsonl").read_text(encoding="utf-8")
    assert "<script>" not in page and "<b>" not in page and 'a"b' not in page
    assert escape(repr(ODD_VALUE)) in page and escape(repr(ODD_KEY)) in page
    assert "h&lt;1&gt;.jsonl" in page
    odd = by_summary(strict, "G2-item", {7, 8})
    svg = drawing(part_for(page, odd))
    assert svg is not None
    _, arrows = boxes_and_arrows(svg)
    assert sorted(arrows) == [("rw", "rw " + repr(ODD_KEY)), ("rw", "rw " + repr(ODD_KEY2))]  # parsed back


def test_the_standalone_page_of_a_clean_history_says_so(tmp_path: Path) -> None:
    clean = check_txn(history([append_txn(0, [["append", 1, 1], ["r", 1, [1]]], 1.0, 1.1)]), "list-append")
    page = write_txn_report(clean, tmp_path / "ok.html", source="ok.jsonl").read_text(encoding="utf-8")
    assert 'data-verdict="valid"' in page and "No anomalies found." in page and "<svg" not in page


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_chromium_without_a_console_message(tmp_path: Path, strict: dict[str, Any]) -> None:
    page = write_txn_report(strict, tmp_path / "h.html", source="h.jsonl")
    loaded = load_page(page.as_uri(), screenshot=tmp_path / "h.png", size=(1200, 1400))
    assert loaded.console == []
    cycles = [a for found in strict["anomalies"].values() for a in found[:DRAWN] if a.get("cycle")]
    assert loaded.dom.count('<g class="txn"') == loaded.dom.count('<g class="edge"') == sum(
        len(a["cycle"]) for a in cycles)
