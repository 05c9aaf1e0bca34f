"""The report's Anomalies section: first in the page, each cycle drawn with one box per transaction and
one labelled arrow per edge, non-cycle anomalies without a drawing, nothing for a clean check, odd keys
and values escaped."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.store import RunStore
from reports.render import write_report
from reports.txn_view import DRAWN, write_txn_report
from tests.reports.browser import find_chromium, load_page
from tests.reports.sample_runs import make_run

SVG = "{http://www.w3.org/2000/svg}"
S = 1_000_000_000


def txn(i: int, process: int, ops: list[list[Any]], t: int, kind: str = "ok") -> dict[str, Any]:
    return {"id": i, "process": process, "type": kind, "invoke_time": t * S, "complete_time": t * S + S // 2,
            "invoke_index": 2 * i, "complete_index": 2 * i + 1, "lines": [2 * i + 1, 2 * i + 2], "ops": ops}


def cycle_anomaly(kind: str, txns: list[dict[str, Any]], edges: list[tuple[str, Any]]) -> dict[str, Any]:
    steps = []
    for n, (t, (etype, key)) in enumerate(zip(txns, edges, strict=True)):
        to = txns[(n + 1) % len(txns)]["id"]
        sentence = f"T{t['id']} {etype}→ T{to} on key {key}"
        steps.append({"txn": t, "edge": {"type": etype, "key": key, "to": to, "explanation": sentence}})
    return {"type": kind, "summary": f"a {kind} cycle of {len(txns)} transactions", "cycle": steps, "txns": txns,
            "explanation": [s["edge"]["explanation"] for s in steps]}


def invalid_result() -> dict[str, Any]:
    t1 = txn(1, 0, [["append", 4, 1], ["r", 5, [1]]], 1)
    t2 = txn(2, 1, [["append", 5, 1], ["r", 4, []]], 1)
    t3 = txn(3, 2, [["append", 7, 2], ["r", 6, None]], 2)
    t4 = txn(4, 3, [["append", 6, 1]], 2)
    t5 = txn(5, 4, [["r", 7, [2]]], 3)
    t9 = txn(9, 5, [["append", 8, 3]], 4, kind="fail")
    t10 = dict(txn(10, 6, [["r", 8, [3]]], 5), lines=[None, None])  # read from memory: no lines
    return {
        "valid": False, "workload": "list-append", "consistency": ["strict-serializable"],
        "txns": 11, "ok": 10, "fail": 1, "info": 0,
        "anomaly_types": ["G-single", "G1a", "G2-item"], "prohibited": ["G-single", "G2-item"], "also_seen": ["G1a"],
        "not": ["read-committed", "serializable"],
        "anomalies": {
            "G2-item": [cycle_anomaly("G2-item", [t1, t2], [("rw", 5), ("rw", 4)])],
            "G-single": [cycle_anomaly("G-single", [t3, t4, t5], [("rw", 6), ("process", None), ("wr", 7)])],
            "G1a": [{"type": "G1a", "summary": "T10 read 3 from key 8, which the failed T9 appended",
                     "txns": [t10, t9], "explanation": ["T9 failed, yet T10 read its append of 3 to key 8"]}],
        },
    }


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


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "store")


def with_txn(store: RunStore, result: dict[str, Any]) -> Path:
    run = make_run(store)
    stored = json.loads(run.results_json.read_text(encoding="utf-8"))
    stored["checkers"]["txn"] = result
    stored["valid"] = result["valid"]
    run.results_json.write_text(json.dumps(stored), encoding="utf-8")
    return write_report(run.path, draw=False)


def test_an_invalid_check_opens_the_report_with_its_anomalies(store: RunStore) -> None:
    html = with_txn(store, invalid_result()).read_text(encoding="utf-8")
    body = html[html.index("</div>", html.index('id="verdict"')):]
    first_heading = re.search(r"<h2[^>]*>([^<]+)", body)
    assert first_heading and first_heading.group(1) == "Anomalies"
    sec = section(html)
    order = [m for m in re.findall(r'class="anomaly-type" id="anomaly-([^"]+)"', sec)]
    assert order == ["G-single", "G2-item", "G1a"]  # prohibited first, then also seen
    assert sec.index("Also seen") < sec.index('id="anomaly-G1a"')
    assert "a G-single cycle of 3 transactions" in sec and "T3 rw→ T4 on key 6" in sec
    assert 'href="#anomalies"' in html  # the txn card points up to it


def test_each_cycle_is_drawn_with_a_box_per_transaction_and_an_arrow_per_edge(store: RunStore) -> None:
    parts = anomalies(with_txn(store, invalid_result()).read_text(encoding="utf-8"))
    svg = drawing(parts["anomaly-G-single-1"])
    assert svg is not None
    boxes, arrows = boxes_and_arrows(svg)
    assert boxes == ["T3 (p2)", "T4 (p3)", "T5 (p4)"]
    assert arrows == [("rw", "rw k6"), ("process", "process"), ("wr", "wr k7")]
    two = drawing(parts["anomaly-G2-item-1"])
    assert two is not None
    assert boxes_and_arrows(two) == (["T1 (p0)", "T2 (p1)"], [("rw", "rw k5"), ("rw", "rw k4")])
    paths = [p.get("d") for p in two.iter(f"{SVG}path") if p.get("fill") == "none"]
    assert len(set(paths)) == 2  # the pair's two edges bow apart
    table = parts["anomaly-G-single-1"][parts["anomaly-G-single-1"].index("<table"):]
    assert "<td class=\"num\">2.000</td><td class=\"num\">2.500</td>" in table  # seconds from the start
    assert "<strong>[r 6 nil]</strong>" in table and "<strong>[append 6 1]</strong>" in table
    rows = dict(re.findall(r'<td class="mono">(T\d+)</td>.*?<td>([^<]*)</td></tr>', table, re.S))
    assert rows == {"T3": "none", "T4": "none", "T5": "partition"}  # the sample run's partition: 3 s to 6 s


def test_a_drawing_fits_inside_its_viewbox(store: RunStore) -> None:
    parts = anomalies(with_txn(store, invalid_result()).read_text(encoding="utf-8"))
    svg = drawing(parts["anomaly-G-single-1"])
    assert svg is not None
    _, _, width, height = (float(v) for v in (svg.get("viewBox") or "").split())
    assert width < 1000
    for rect in svg.iter(f"{SVG}rect"):
        x, y, w, h = (float(rect.get(a) or 0) for a in ("x", "y", "width", "height"))
        assert x >= 0 and y >= 0 and x + w <= width and y + h <= height


def test_a_non_cycle_anomaly_has_sentences_and_a_table_but_no_drawing(store: RunStore) -> None:
    parts = anomalies(with_txn(store, invalid_result()).read_text(encoding="utf-8"))
    g1a = parts["anomaly-G1a-1"]
    assert drawing(g1a) is None
    assert "T9 failed, yet T10 read its append of 3 to key 8" in g1a
    assert "<td class=\"mono\">T9</td>" in g1a and "<td>fail</td>" in g1a
    assert "<td class=\"mono\">#20, #21</td>" in g1a and "<td class=\"mono\">19, 20</td>" in g1a


def test_a_clean_check_has_no_anomalies_section(store: RunStore) -> None:
    clean = {"valid": True, "workload": "list-append", "consistency": ["serializable"], "txns": 3, "ok": 3,
             "fail": 0, "info": 0, "anomaly_types": [], "prohibited": [], "also_seen": [], "not": [],
             "anomalies": {}}
    html = with_txn(store, clean).read_text(encoding="utf-8")
    assert 'id="anomalies"' not in html and "<svg" not in html
    assert "No anomalies." in html


def test_only_the_first_few_of_a_type_are_drawn(store: RunStore) -> None:
    result = invalid_result()
    one = result["anomalies"]["G2-item"][0]
    result["anomalies"]["G2-item"] = [dict(one, summary=f"cycle number {i}") for i in range(DRAWN + 30)]
    result["counts"] = {"G2-item": DRAWN + 130, "G-nonadjacent": 2}  # counted beyond what is explained
    sec = section(with_txn(store, result).read_text(encoding="utf-8"))
    g2 = sec[sec.index('id="anomaly-G2-item"'):sec.index('id="anomaly-G1a"')]
    assert g2.count("<svg") == DRAWN
    assert "cycle number 5" in g2 and f"cycle number {DRAWN - 1}</p>" in g2
    assert f"… and 110 more G2-item not shown here (the checker explained {DRAWN + 30} of the {DRAWN + 130}" in g2
    assert 'class="anomaly-type" id="anomaly-G-nonadjacent"' in sec
    assert "The checker counted 2 but explained none." in sec


def test_odd_keys_and_values_are_escaped(tmp_path: Path) -> None:
    odd = '<b>&"k\'</b>'
    t1 = txn(1, 0, [["w", odd, "<script>alert(1)</script>"], ["r", "x&y", None]], 1)
    t2 = txn(2, 1, [["w", "x&y", 'a"b'], ["r", odd, None]], 1)
    result = invalid_result()
    result["workload"] = "rw-register"
    result["anomalies"] = {"G2-item": [cycle_anomaly("G2-item<i>", [t1, t2], [("rw", odd), ("rw", "x&y")])]}
    result["prohibited"], result["also_seen"] = ["G2-item"], []
    page = write_txn_report(result, tmp_path / "h.html", source="h<1>.jsonl").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "<b>&" not in page and "G2-item<i>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "h&lt;1&gt;.jsonl" in page
    svg = drawing(section(page))
    assert svg is not None
    _, arrows = boxes_and_arrows(svg)
    assert arrows == [("rw", "rw " + repr(odd)), ("rw", "rw 'x&y'")]  # parsed back: the text as written


def test_the_standalone_page_of_a_clean_history_says_so(tmp_path: Path) -> None:
    clean = {"valid": True, "workload": "rw-register", "consistency": ["snapshot-isolation"], "txns": 2,
             "anomalies": {}}
    page = write_txn_report(clean, tmp_path / "ok.html", source="ok.jsonl").read_text(encoding="utf-8")
    assert 'data-verdict="valid"' in page and "No anomalies found." in page and "<svg" not in page


@pytest.mark.slow
@pytest.mark.skipif(find_chromium() is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_the_page_renders_in_chromium_without_a_console_message(tmp_path: Path) -> None:
    page = write_txn_report(invalid_result(), tmp_path / "h.html", source="h.jsonl")
    loaded = load_page(page.as_uri(), screenshot=tmp_path / "h.png", size=(1200, 1400))
    assert loaded.console == []
    assert loaded.dom.count('<g class="txn"') == 5 and loaded.dom.count('<g class="edge"') == 5
