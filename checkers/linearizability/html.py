"""A self-contained, interactive HTML timeline of counterexamples (no external files or scripts).

Each op is a bar on its process's row, from invocation to completion (unknown outcomes fade out to
the right). The longest linearizable prefix is drawn as numbered linearization points joined by a
line; the ops that could not come next are red, and the op that forced the decision is outlined. A
slider steps through the prefix and shows the model state after each step.
"""

from __future__ import annotations

import html
import json
from typing import Any

from checkers.linearizability.counterexample import Counterexample
from checkers.linearizability.explain import explain
from checkers.linearizability.witness import Witness

_STYLE = """
body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}
h2{font-size:1.1em;margin-top:2em} pre{background:#f6f6f6;padding:.8em;overflow:auto;font-size:12px}
.op{fill:#9ec5fe;stroke:#3d6fb4;stroke-width:1;cursor:pointer} .op.done{fill:#8fd19e;stroke:#2f7d45}
.op.info{fill:url(#fade)} .op.stuck{fill:#f5a3a3;stroke:#c0262d;stroke-width:2}
.op.blocking{stroke:#e8890c;stroke-width:3} .lp{fill:#1b4f2a} .lpl{font-size:10px;fill:#1b4f2a}
.path{fill:none;stroke:#1b4f2a;stroke-width:1.2;stroke-dasharray:3 2} .proc{font-size:11px;fill:#555}
.state{font-family:monospace;background:#eef;padding:.2em .5em} #tip{position:fixed;background:#fff;
border:1px solid #999;padding:.3em .6em;font-size:12px;pointer-events:none;display:none}
"""

_SCRIPT = """
const tip=document.getElementById('tip');
document.querySelectorAll('.op').forEach(b=>{b.addEventListener('mousemove',e=>{tip.style.display='block';
tip.style.left=(e.clientX+12)+'px';tip.style.top=(e.clientY+12)+'px';tip.textContent=b.dataset.tip;});
b.addEventListener('mouseleave',()=>{tip.style.display='none';});});
document.querySelectorAll('.cex').forEach(sec=>{const data=JSON.parse(sec.querySelector('script').textContent);
const slider=sec.querySelector('input'),out=sec.querySelector('.state'),label=sec.querySelector('.step');
function show(k){sec.querySelectorAll('[data-step]').forEach(el=>{el.style.opacity=
(+el.dataset.step<=k)?1:0.15;});sec.querySelectorAll('.op').forEach(el=>{const s=+el.dataset.order;
el.classList.toggle('done',s>0&&s<=k);});out.textContent=k?data.states[k-1]:data.initial;
label.textContent=k+' / '+data.states.length;}
slider.addEventListener('input',()=>show(+slider.value));show(+slider.value);});
"""


def _section(cex: Counterexample, title: str, text: str | None = None) -> str:
    positions = sorted({p for op in cex.ops for p in (op.call_pos, op.return_pos) if p is not None})
    rank = {p: k for k, p in enumerate(positions)}
    end = len(positions) + 1
    procs = sorted({op.process for op in cex.ops}, key=lambda p: (isinstance(p, str), str(p).zfill(8)))
    row = {p: k for k, p in enumerate(procs)}
    unit, height, left = 18, 26, 90
    width = left + end * unit + 20
    order = {i: k for k, (i, _) in enumerate(cex.prefix, start=1)}
    stuck = {s.op for s in cex.stuck}
    parts = [f'<svg width="{width}" height="{len(procs) * height + 30}">',
             '<defs><linearGradient id="fade"><stop offset="0" stop-color="#c9c9f5"/>'
             '<stop offset="1" stop-color="#fff"/></linearGradient></defs>']
    for p, k in row.items():
        parts.append(f'<text class="proc" x="4" y="{k * height + 20}">process {html.escape(str(p))}</text>')
    for op in cex.ops:
        x0 = left + rank[op.call_pos] * unit
        x1 = left + (rank[op.return_pos] if op.return_pos is not None else end) * unit
        cls = ["op"] + (["info"] if op.return_pos is None else []) + (["stuck"] if op.index in stuck else [])
        if op.index == cex.blocking:
            cls.append("blocking")
        why = next((s.reason for s in cex.stuck if s.op == op.index), "")
        tip = f"process {op.process}: {op.description} ({op.outcome}; history line {op.call_line})"
        tip += f" - {why}" if why else ""
        parts.append(f'<rect class="{" ".join(cls)}" x="{x0}" y="{row[op.process] * height + 8}" '
                     f'width="{max(x1 - x0, 4)}" height="{height - 10}" rx="3" data-order="{order.get(op.index, 0)}"'
                     f' data-tip="{html.escape(tip)}"/>')
    # Linearization points: as early as each op's invocation allows, in prefix order.
    points, t = [], -1.0
    for i, _ in cex.prefix:
        op = cex.ops[i]
        t = max(t + 0.25, float(rank[op.call_pos]) + 0.5)
        points.append((left + t * unit, row[op.process] * height + 8 + (height - 10) / 2))
    for k in range(1, len(points)):
        (ax, ay), (bx, by) = points[k - 1], points[k]
        parts.append(f'<line class="path" x1="{ax:.1f}" y1="{ay:.1f}" x2="{bx:.1f}" y2="{by:.1f}" '
                     f'data-step="{k + 1}"/>')
    for k, (x, y) in enumerate(points, start=1):
        parts.append(f'<circle class="lp" cx="{x:.1f}" cy="{y:.1f}" r="3.5" data-step="{k}"/>'
                     f'<text class="lpl" x="{x + 4:.1f}" y="{y - 5:.1f}" data-step="{k}">{k}</text>')
    parts.append("</svg>")
    data = {"initial": cex.initial_state, "states": [s for _, s in cex.prefix]}
    blob = json.dumps(data).replace("</", "<\\/")
    n = len(cex.prefix)
    return (f'<section class="cex"><h2>{html.escape(title)}</h2>'
            f'<p>Step through the longest linearizable prefix: <input type="range" min="0" max="{n}" '
            f'value="{n}"> <span class="step"></span> state: <span class="state"></span></p>'
            f'<div style="overflow-x:auto">{"".join(parts)}</div>'
            f'<pre>{html.escape(explain(cex) if text is None else text)}</pre>'
            f'<script type="application/json">{blob}</script></section>')


def render_html(title: str, counterexamples: list[Counterexample], summary: dict[str, Any] | None = None,
                witnesses: list[Witness] | None = None) -> str:
    """One self-contained HTML page explaining every counterexample given, minimal witnesses first.

    Args:
        title: the page title (usually the history's path).
        counterexamples: the failing partitions' counterexamples.
        summary: key facts shown at the top (verdict, model, ops...).
        witnesses: the failing partitions' minimal witnesses, shown before the counterexamples.
    """
    facts = "".join(f"<li><b>{html.escape(str(k))}</b>: {html.escape(str(v))}</li>"
                    for k, v in (summary or {}).items())
    sections = "".join(
        _section(c, f"Key {c.label!r}" if c.label is not None else "Counterexample") for c in counterexamples)
    if not counterexamples:
        sections = "<p>No counterexample: the history is linearizable.</p>"
    if witnesses:
        from checkers.linearizability.witness_io import explain_witness, witness_key

        sections = "".join(
            _section(w.counterexample, f"Minimal witness: {len(w.calls)} ops"
                     + (f" (key {witness_key(w)!r})" if witness_key(w) is not None else ""), explain_witness(w))
            for w in witnesses if w.counterexample is not None) + sections
    return (f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f"<style>{_STYLE}</style></head><body><h1>{html.escape(title)}</h1><ul>{facts}</ul>"
            f'<p>Bars: ops per process, from invocation to completion (faded: outcome unknown). '
            f'Green: in the linearizable prefix; dots: linearization points in order; red: could not be '
            f'linearized next; orange outline: the op that had to come next.</p>{sections}'
            f'<div id="tip"></div><script>{_SCRIPT}</script></body></html>')
