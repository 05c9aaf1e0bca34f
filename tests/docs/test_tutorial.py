"""The tutorial (docs/tutorial/) proven block by block, as a reader would follow it.

Every fenced block of every page is one of:

- a file block (``python``, ``toml``, ``yaml``) whose first line names its file, relative to the reader's
  ``my-etcd`` folder: ``# PATH`` is the whole file (header included), ``# PATH, continued`` is appended to
  the file, and ``# PATH, replacing NAME`` replaces the definition of NAME (a function, a class, or an
  assignment) in it; the header of the last two is a note, not code;
- a ``console`` block: commands after ``$``, each followed by what it prints (checked line by line, in
  order; ``...`` stands for anything, and numbers may differ); ``echo $?`` checks the previous command's
  exit code, and every other command must exit 0;
- a ``text`` block: the package's layout, which must list exactly the files the file blocks make.

The fast tests build the package from the file blocks and check it compiles, is ruff-clean and matches
the layout. The slow tests create a fresh virtual environment holding Fencepost (as
tests/examples/test_toy_kv.py does), then go through the pages in order: each page's file blocks are
written into a temporary ``my-etcd`` folder and its commands run there, so each page runs against the
package as it stands at that point. Commands run with shorter time limits than the pages show (the pages
say so): see :func:`shortened`.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
import tomllib
import venv
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial"
PROJECT = "my-etcd"
"""The reader's folder: file paths in the blocks are relative to it."""
FILE_LANGS = {"python", "toml", "yaml"}
LANGS = FILE_LANGS | {"console", "text"}
HEADER = re.compile(r"^# (?P<path>[\w./-]+)(?:, (?P<mode>continued|replacing (?P<name>\w+)))?$")
TIME_LIMIT = 12
"""The most seconds of workload a ``fencepost test`` command runs for here."""
CAMPAIGN_TIME_LIMIT = 5
"""Seconds of workload for each run of a pytest campaign here."""


# --- reading the pages ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A fenced code block of a page."""

    page: str
    line: int
    lang: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The tutorial's pages in reading order: the index, then the numbered steps."""
    return [TUTORIAL / "index.md", *sorted(TUTORIAL.glob("[0-9][0-9]-*.md"))]


FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")


def blocks(page: Path) -> list[Block]:
    """The page's fenced code blocks, in order."""
    found: list[Block] = []
    lines = page.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        assert i < len(lines), f"{page.name}:{start + 1}: a code block is never closed"
        found.append(Block(page.name, start + 1, m["lang"], "\n".join(body) + "\n"))
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [b for p in pages() for b in blocks(p)]


# --- file blocks ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Edit:
    """What a file block does to its file."""

    path: str
    mode: str  # "whole", "continued" or "replacing"
    name: str | None
    code: str  # what goes into the file


def edit_of(block: Block) -> Edit:
    """Read a file block's header."""
    first, _, rest = block.text.partition("\n")
    m = HEADER.match(first)
    assert m is not None, f"{block.where}: a {block.lang} block must start with '# PATH' (got {first!r})"
    if m["mode"] is None:
        return Edit(m["path"], "whole", None, block.text)
    code = rest.strip("\n") + "\n"
    if m["mode"] == "continued":
        return Edit(m["path"], "continued", None, code)
    return Edit(m["path"], "replacing", m["name"], code)


def definition_lines(source: str, name: str) -> list[tuple[int, int]]:
    """The line spans (1-based, inclusive) of every definition of ``name`` in ``source``: functions,
    classes, and assignments to it."""
    spans = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name == name:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.append((first, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                spans.append((node.lineno, node.end_lineno or node.lineno))
    return spans


def apply(block: Block, root: Path) -> Path:
    """Write a file block into the project folder ``root``; the file it changed."""
    edit = edit_of(block)
    path = root / edit.path
    if edit.mode == "whole":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit.code)
    elif edit.mode == "continued":
        assert path.exists(), f"{block.where}: continues {edit.path}, which no earlier block wrote"
        path.write_text(path.read_text().rstrip("\n") + "\n\n" + edit.code)
    else:
        assert path.exists(), f"{block.where}: replaces in {edit.path}, which no earlier block wrote"
        assert edit.name is not None
        source = path.read_text()
        spans = definition_lines(source, edit.name)
        assert len(spans) == 1, f"{block.where}: {edit.path} defines {edit.name} {len(spans)} times, not once"
        assert definition_lines(textwrap.dedent(edit.code), edit.name), (
            f"{block.where}: the block does not define {edit.name}")
        lines = source.splitlines()
        first, last = spans[0]
        path.write_text("\n".join([*lines[: first - 1], *edit.code.rstrip("\n").splitlines(), *lines[last:]]) + "\n")
    if path.suffix == ".py":
        try:
            compile(path.read_text(), str(path), "exec")
        except SyntaxError as e:
            pytest.fail(f"{block.where}: {edit.path} does not compile after this block: {e}")
    elif path.suffix == ".toml":
        tomllib.loads(path.read_text())
    return path


def build(root: Path) -> None:
    """Every file block of every page, applied in order."""
    for block in all_blocks():
        if block.lang in FILE_LANGS:
            apply(block, root)


# --- console blocks -------------------------------------------------------------------------------


@dataclass
class Command:
    """A command of a console block and what the page says it prints."""

    where: str
    line: str
    shown: list[str] = field(default_factory=list)


def commands(block: Block) -> list[Command]:
    """The commands of a console block, with continuation lines (a trailing backslash) joined."""
    found: list[Command] = []
    pending = ""
    for i, line in enumerate(block.text.splitlines()):
        if pending or line.startswith("$ "):
            text = pending + (line[2:] if not pending else line)
            if text.endswith("\\"):
                pending = text[:-1] + " "
                continue
            pending = ""
            found.append(Command(f"{block.page}:{block.line + 1 + i}", text.strip()))
        else:
            assert found, f"{block.where}: a console block must start with a '$ ' command"
            found[-1].shown.append(line)
    assert not pending, f"{block.where}: the last command ends with a backslash"
    return found


def pattern(shown: str) -> re.Pattern[str]:
    """A shown output line as a pattern: whitespace runs are one space, ``...`` is anything, and a run of
    digits is any run of digits (seeds, counts, addresses, times differ from run to run)."""
    text = " ".join(shown.split())
    parts = []
    for piece in re.split(r"(\.\.\.|\d+)", text):
        if piece == "...":
            parts.append(".*")
        elif piece.isdigit():
            parts.append(r"\d+")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts))


def unmatched(shown: list[str], output: str) -> str | None:
    """The first shown line that the output lacks (shown lines must appear in order); None if none."""
    actual = [" ".join(line.split()) for line in output.splitlines()]
    at = 0
    for line in shown:
        if line.strip() in ("", "..."):
            continue
        p = pattern(line)
        while at < len(actual) and not p.fullmatch(actual[at]):
            at += 1
        if at == len(actual):
            return line
        at += 1
    return None


def shortened(line: str) -> str:
    """The command as the slow test runs it: at most TIME_LIMIT seconds of workload where a ``fencepost test``
    command gives a time limit (a recipe runs as its bug defines it), and CAMPAIGN_TIME_LIMIT for each run of
    a pytest campaign."""
    if line.startswith("fencepost test "):
        line = re.sub(r"--time-limit (\d+(?:\.\d+)?)", lambda m: f"--time-limit {min(float(m[1]), TIME_LIMIT):g}",
                      line)
    if line.startswith("pytest ") and "--fencepost-time-limit" not in line:
        line += f" --fencepost-time-limit {CAMPAIGN_TIME_LIMIT}"
    return line


# --- fast checks: the blocks themselves ------------------------------------------------------------


def test_the_pages_are_there_and_the_index_links_each_step_in_order() -> None:
    steps = pages()[1:]
    assert len(steps) == 6, [p.name for p in steps]
    links = re.findall(r"\]\((\d\d-[\w-]+\.md)\)", (TUTORIAL / "index.md").read_text())
    assert links == [p.name for p in steps]
    for page, following in zip(steps, [*steps[1:], None], strict=True):
        if following is not None:
            assert f"]({following.name})" in page.read_text(), f"{page.name} does not link to {following.name}"


def test_every_block_is_a_known_kind_and_every_file_block_names_its_file() -> None:
    for block in all_blocks():
        assert block.lang in LANGS, f"{block.where}: untested block language {block.lang!r}"
        if block.lang in FILE_LANGS:
            edit_of(block)
        elif block.lang == "console":
            assert commands(block), f"{block.where}: a console block without commands"


def test_the_blocks_build_a_package_that_compiles_and_is_lint_clean(tmp_path: Path) -> None:
    root = tmp_path / PROJECT
    build(root)
    project = tomllib.loads((root / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["fencepost.systems"]["my-etcd"]
    module, _, attr = target.partition(":")
    source = (root / (module.replace(".", "/") + ".py")).read_text()
    assert definition_lines(source, attr), f"the entry point names {target}, which is not defined"
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed beside this interpreter")
    lint = subprocess.run([str(ruff), "check", "--isolated", "--no-cache", "--select", "E,F,W,I", "--line-length",
                           "120", "."], cwd=root, capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_the_layout_lists_exactly_the_files_the_blocks_make(tmp_path: Path) -> None:
    root = tmp_path / PROJECT
    build(root)
    trees = [b for b in all_blocks() if b.lang == "text" and b.text.startswith(f"{PROJECT}/\n")]
    assert len(trees) == 1, "the index shows the package's layout once"
    listed = {line.strip() for line in trees[0].text.splitlines()[1:] if line.strip()}
    made = {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}
    assert listed == made


def test_a_changed_line_of_output_no_longer_matches() -> None:
    output = "fencepost: my-etcd-register-none seed=77 store=store\nVALID  my-etcd-register-none  (1634 ok ops)\n"
    assert unmatched(["VALID  my-etcd-register-none  (12 ok ops)"], output) is None
    assert unmatched(["...", "fencepost: ... store=store", "VALID ..."], output) is None
    assert unmatched(["INVALID  my-etcd-register-none  (12 ok ops)"], output) is not None
    assert unmatched(["VALID  my-etcd-register-none  (12 ok ops)", "fencepost: ..."], output) is not None
    assert unmatched(["VALID  my-etcd-set-none  (12 ok ops)"], output) is not None


def test_replacing_a_definition_needs_exactly_one_to_replace(tmp_path: Path) -> None:
    root = tmp_path / PROJECT
    apply(Block("t.md", 1, "python", "# m.py\nclass A:\n    x = 1\n\n    def f(self):\n        return 1\n"), root)
    apply(Block("t.md", 2, "python", "# m.py, replacing f\n    def f(self):\n        return 2\n"), root)
    apply(Block("t.md", 3, "python", "# m.py, continued\n    def g(self):\n        return 3\n"), root)
    assert (root / "m.py").read_text() == ("# m.py\nclass A:\n    x = 1\n\n    def f(self):\n        return 2\n\n"
                                           "    def g(self):\n        return 3\n")
    with pytest.raises(AssertionError, match="defines h 0 times"):
        apply(Block("t.md", 4, "python", "# m.py, replacing h\n    def h(self):\n        pass\n"), root)
    with pytest.raises(AssertionError, match="does not define x"):
        apply(Block("t.md", 5, "python", "# m.py, replacing x\n    y = 2\n"), root)


def test_shortened_commands_keep_their_meaning() -> None:
    assert shortened("fencepost test --system my-etcd --workload register --time-limit 30") == (
        f"fencepost test --system my-etcd --workload register --time-limit {TIME_LIMIT}")
    assert shortened("fencepost test --system my-etcd --workload set --time-limit 10") == (
        "fencepost test --system my-etcd --workload set --time-limit 10")
    assert shortened("fencepost test --system my-etcd --bug serializable-reads") == (
        "fencepost test --system my-etcd --bug serializable-reads")
    assert shortened("fencepost test --system my-etcd --nemesis clock") == (
        "fencepost test --system my-etcd --nemesis clock")
    assert shortened("pytest tests -q").endswith(f"--fencepost-time-limit {CAMPAIGN_TIME_LIMIT}")
    assert shortened("grep nemesis store/latest/history.jsonl | head -n 2") == (
        "grep nemesis store/latest/history.jsonl | head -n 2")


def test_the_nightly_job_runs_the_campaign_the_tutorial_runs() -> None:
    """The workflow cannot run here; it must at least install etcd and the plugin, and run the pytest
    command that the last page runs (with any options added)."""
    nightly = [b for b in all_blocks() if b.lang == "yaml"]
    assert len(nightly) == 1 and edit_of(nightly[0]).path == ".github/workflows/nightly.yml"
    text = nightly[0].text
    ran = [c.line for b in all_blocks() if b.lang == "console" for c in commands(b) if c.line.startswith("pytest")]
    assert ran, "the tutorial runs no pytest command"
    assert "apt-get install -y etcd-server" in text, "the job must install etcd"
    assert re.search(r"pip install (.* )?-e \.", text), "the job must install the plugin"
    m = re.search(r"python -m pytest ([^\n]*(?:\n\s+--[^\n]*)*)", text)
    assert m is not None, "the job must run pytest"
    job = shlex.split(m[1].replace("\n", " "))
    tutorial = [w for w in shlex.split(ran[-1])[1:] if w != "-q"]
    assert set(tutorial) <= set(job), f"the job runs pytest {shlex.join(job)}, not {ran[-1]}"
    assert job[: job.index("--fencepost-system") + 2] == tutorial[: tutorial.index("--fencepost-system") + 2]


# --- slow: the pages, run -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A new virtual environment holding Fencepost (its core), pytest and PyYAML; its bin folder."""
    from harness.backends.iptables import why_unavailable

    if shutil.which("etcd") is None:
        pytest.skip("etcd is not installed (apt-get install -y etcd-server)")
    why = why_unavailable()
    if why is not None:
        pytest.skip(f"the tutorial partitions: {why}")
    env = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=True).create(env)
    bin_dir = env / "bin"
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, "-e", str(REPO), "pytest", "pyyaml"], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    yield bin_dir


@dataclass
class Reader:
    """The reader's shell: where they are, and the environment they run commands in."""

    home: Path
    cwd: Path
    env: dict[str, str]
    failed: str | None = None

    @property
    def project(self) -> Path:
        return self.home / PROJECT

    def run(self, line: str, timeout: float) -> subprocess.CompletedProcess[str]:
        """Run ``line`` in bash where the reader is, its output and errors together as a terminal shows them;
        follow a ``cd``."""
        marker = self.home.parent / f"{self.home.name}.cwd"
        script = "\n".join(["exec 2>&1", "set -o pipefail", f"cd {shlex.quote(str(self.cwd))}", line, "rc=$?",
                            f"pwd > {shlex.quote(str(marker))}", "exit $rc"])
        done = subprocess.run(["bash", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout, env=self.env, stdin=subprocess.DEVNULL)
        if marker.exists():
            self.cwd = Path(marker.read_text().strip())
        return done


@pytest.fixture(scope="module")
def reader(fresh: Path, tmp_path_factory: pytest.TempPathFactory) -> Reader:
    """A reader with the fresh environment active, in an empty home folder."""
    home = tmp_path_factory.mktemp("reader")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHON", "VIRTUAL_ENV", "COV"))}
    env.update(PATH=f"{fresh}{os.pathsep}{env.get('PATH', '')}", VIRTUAL_ENV=str(fresh.parent), HOME=str(home),
               PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONUNBUFFERED="1")
    return Reader(home, home, env)


def timeout_for(line: str) -> float:
    if line.startswith(("fencepost test", "python try_")):
        return 180
    if "pytest" in line:
        return 400
    return 300


def check_console(block: Block, reader: Reader) -> None:
    """Run each command of the block; check its exit code and that it prints what the page shows."""
    previous: tuple[str, subprocess.CompletedProcess[str]] | None = None

    def exited_0() -> None:
        if previous is not None:
            where, done = previous
            assert done.returncode == 0, f"{where}: exit {done.returncode}\n{done.stdout[-4000:]}"

    for command in commands(block):
        if command.line == "echo $?":
            assert previous is not None, f"{command.where}: echo $? with no command before it"
            where, done = previous
            shown = [s.strip() for s in command.shown if s.strip()]
            assert [str(done.returncode)] == shown, (
                f"{where}: exit {done.returncode}, where the page shows {shown}\n{done.stdout[-4000:]}")
            previous = None
            continue
        exited_0()
        line = shortened(command.line)
        done = reader.run(line, timeout_for(line))
        missing = unmatched(command.shown, done.stdout)
        assert missing is None, (f"{command.where}: `{line}` (exit {done.returncode}) did not print {missing!r}:\n"
                                 f"{done.stdout[-4000:]}")
        previous = (f"{command.where}: `{line}`", done)
    exited_0()


@pytest.mark.slow
@pytest.mark.parametrize("page", [p.name for p in pages()])
def test_the_page_works_as_written(page: str, reader: Reader) -> None:
    """Write the page's file blocks into the reader's folder and run its commands, in the page's order."""
    if reader.failed is not None:
        pytest.skip(f"an earlier page failed: {reader.failed}")
    reader.failed = page
    for block in blocks(TUTORIAL / page):
        if block.lang in FILE_LANGS:
            apply(block, reader.project)
        elif block.lang == "console":
            check_console(block, reader)
    reader.failed = None


@pytest.mark.slow
def test_the_nightly_workflow_is_valid_yaml_for_github_actions(reader: Reader, fresh: Path) -> None:
    """The workflow file the last page wrote parses, and its job installs etcd and this package and runs
    the campaign as root."""
    workflow = reader.project / ".github" / "workflows" / "nightly.yml"
    if not workflow.exists():
        pytest.skip("the pages did not get as far as the workflow")
    code = ("import json, sys, yaml; d = yaml.safe_load(open(sys.argv[1])); "
            "d['on'] = d.pop(True, d.get('on')); print(json.dumps(d))")
    done = subprocess.run([str(fresh / "python"), "-c", code, str(workflow)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    import json

    doc = json.loads(done.stdout)
    assert "schedule" in doc["on"] and doc["on"]["schedule"][0]["cron"]
    steps = [s for job in doc["jobs"].values() for s in job["steps"]]
    runs = "\n".join(str(s.get("run", "")) for s in steps)
    assert "apt-get install -y etcd-server" in runs
    assert re.search(r"sudo \S*python -m pytest .*--fencepost-system my-etcd", runs.replace("\n", " "))
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact")]
    assert uploads and uploads[0].get("if") == "always()"
