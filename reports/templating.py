"""The Jinja2 environment every page shares: templates shipped as package data, autoescaped, with filters."""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from typing import Any

import jinja2

from reports.run_view import verdict_of

_STAMP = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(?:\.(\d+))?Z")


def pretty_json(value: Any, limit: int = 4000) -> str:
    """``value`` as indented JSON, cut at ``limit`` characters."""
    text = json.dumps(value, indent=2, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more characters)"


def short_value(value: Any, limit: int = 200) -> str:
    """A scalar as text, a structure as compact JSON, cut at ``limit`` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def stamp_time(stamp: str) -> str:
    """A run folder's UTC timestamp (``20240501T120000.000Z``) as ``2024-05-01 12:00:00``; else as given."""
    m = _STAMP.match(stamp)
    if not m:
        return stamp
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    try:
        return dt.datetime(y, mo, d, h, mi, s).strftime("%Y-%m-%d %H:%M:%S")
    except ValueError:
        return stamp


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment (templates from ``reports/templates``)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reports", "templates"),
        autoescape=True,
        undefined=jinja2.ChainableUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pretty_json"] = pretty_json
    env.filters["short"] = short_value
    env.filters["verdict"] = verdict_of
    env.filters["stamp_time"] = stamp_time
    return env
