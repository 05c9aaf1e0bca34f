"""Where ``get_session()`` takes its master from, in each case in its own process (a JVM keeps its first
settings): the ``master`` argument; ``SPARK_REMOTE`` (test_connect.py); ``spark.master`` from spark-submit's
``--master`` or from ``spark-defaults.conf`` in ``SPARK_CONF_DIR``; else ``local[*]``. Each case starts one
local-mode driver (about 15 s on a loaded 2-core machine); skipped without Java or PySpark."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import spark_missing

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]

DRIVER = """\
import sys
from checkers.spark.engine import get_session, stop_session
for master in sys.argv[1:]:
    session = get_session(master or None)
    conf = session.conf
    print("MASTER", master or "-", conf.get("spark.master"), conf.get("spark.executor.memory", "-"), flush=True)
    stop_session()
"""


def _masters(tmp_path: Path, *, submit: list[str] | None, defaults: str | None,
             asked: list[str]) -> dict[str, tuple[str, str]]:
    """Run the driver (under spark-submit with ``submit`` as its options, or with plain Python) asking
    get_session() for each master in ``asked`` ('' for none); each session's master and executor memory."""
    pytest.importorskip("pyspark")
    reason = spark_missing()
    if reason:
        pytest.skip(reason)
    from checkers.spark.cluster import spark_home

    conf_dir = tmp_path / "conf"
    conf_dir.mkdir()
    if defaults is not None:
        (conf_dir / "spark-defaults.conf").write_text(f"spark.master {defaults}\nspark.ui.enabled false\n")
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE", "MASTER", "PYSPARK_SUBMIT_ARGS")}
    env.update(PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1",
               PYTHONPATH=str(REPO), SPARK_CONF_DIR=str(conf_dir))
    if submit is None:
        command = [sys.executable, str(script), *asked]
    else:
        command = [str(spark_home() / "bin" / "spark-submit"), *submit, "--conf", "spark.ui.enabled=false",
                   str(script), *asked]
    out = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, cwd=tmp_path, env=env,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    got = {w[1]: (w[2], w[3]) for w in (line.split() for line in out.stdout.splitlines() if line.startswith("MASTER "))}
    assert len(got) == len(asked), out.stdout + out.stderr[-3000:]
    return got


def test_spark_submit_master_is_used_unless_one_is_named(tmp_path: Path) -> None:
    got = _masters(tmp_path, submit=["--master", "local[1]", "--conf", "spark.executor.memory=777m"],
                   defaults="local[3]", asked=["", "local[2]"])
    assert got == {"-": ("local[1]", "777m"), "local[2]": ("local[2]", "777m")}  # and its --conf is kept


def test_spark_defaults_master_is_used_unless_one_is_named(tmp_path: Path) -> None:
    got = _masters(tmp_path, submit=None, defaults="local[2]", asked=["", "local[1]"])
    assert got == {"-": ("local[2]", "-"), "local[1]": ("local[1]", "-")}


def test_without_any_master_it_is_local_star(tmp_path: Path) -> None:
    assert _masters(tmp_path, submit=None, defaults=None, asked=[""]) == {"-": ("local[*]", "-")}
