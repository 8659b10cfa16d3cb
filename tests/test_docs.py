"""The README and the manual under docs/: links resolve, the README stays short, no
internal jargon leaks into them, and the examples they show still run.

A newcomer reads README.md first and follows its links into docs/; every check
here guards that path (tests/test_readme.py runs the README's Python blocks).
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
INDEX = DOCS / "index.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
IDS = [str(p.relative_to(ROOT)) for p in PAGES]

FENCE = re.compile(r"^```.*?^```[ \t]*$", flags=re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
#: [text](target) and ![alt](target); the text may be empty once inline code is removed
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", flags=re.M)

#: what only makes sense inside the project's own history, never to a reader
#: A path to the team's folder beside the repository (built in two parts: this file
#: only searches for it, it never reads there).
OUTSIDE = r"\.\./" + "shared"
FORBIDDEN = [r"\bseed\s*\d", r"\bseeds?/", r"\bissue\s+\d", r"this round", OUTSIDE,
             r"DESIGN\.md"]

PAPERS = {
    "Yan et al. 2015": "Performance Modeling and Scalability Optimization of Distributed Deep",
    "Li et al. 2022": "Predicting Throughput of Distributed Stochastic Gradient Descent",
    "Li et al. 2020": "Throughput Prediction of Asynchronous SGD in TensorFlow",
    "Zhang et al. 2023": "Performance Modeling and Analysis of Distributed Deep Neural Network Training",
    "Jain et al.": "Characterizing Distributed Deep Learning Training Performance in Datacenters",
}


def prose(text: str) -> str:
    """The text without fenced blocks and inline code (where brackets are code, not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def links(page: Path) -> list[str]:
    return LINK.findall(prose(page.read_text(encoding="utf-8")))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(h) for h in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8")))}


def blocks(page: Path, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", page.read_text(encoding="utf-8"),
                      flags=re.S | re.M)


def test_the_manual_exists():
    assert INDEX.is_file()
    assert len(PAGES) >= 4, "README.md plus an index and at least two manual pages"


@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_relative_links_and_images_resolve(page):
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target, flags=re.I):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no file {resolved}")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
            broken.append(f"{target}: no heading #{fragment} in {resolved.name}")
    assert not broken, f"{page.name}: " + "; ".join(broken)


def test_link_checker_catches_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[ok](page.md#title), ![img](missing.png), `[not](a-link)`\n"
                    "```\n[code](also-not)\n```\n", encoding="utf-8")
    assert links(page) == ["page.md#title", "missing.png"]
    assert anchors(page) == {"title"}


def test_slug_follows_github():
    assert slug("Yan et al. 2015: how close the layer-wise model gets") == \
        "yan-et-al-2015-how-close-the-layer-wise-model-gets"
    assert slug("Validation on real measurements (DL2)") == "validation-on-real-measurements-dl2"


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines; move detail into docs/"


@pytest.mark.parametrize("pattern", FORBIDDEN)
@pytest.mark.parametrize("page", PAGES, ids=IDS)
def test_no_internal_references(page, pattern):
    text = page.read_text(encoding="utf-8")
    hits = [m.group(0) for m in re.finditer(pattern, text, flags=re.I)]
    assert not hits, f"{page.name} says {hits!r}: cite the paper by its short form instead"


def test_forbidden_patterns_catch_what_they_should():
    caught = ["see seed 003 eq. 9", "as in seeds/001", "fixes issue 10", "new this round",
              "../" + "shared/notes.md", "DESIGN.md"]
    allowed = ["seeded runs", "the `--seed` flag", "issues with TCP", "a round trip"]
    for text in caught:
        assert any(re.search(p, text, flags=re.I) for p in FORBIDDEN), text
    for text in allowed:
        assert not any(re.search(p, text, flags=re.I) for p in FORBIDDEN), text


def test_references_table_names_all_five_papers():
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## References\n", 1)[1].split("\n## ", 1)[0]
    rows = {row.split("|")[1].strip(): row for row in section.splitlines()
            if row.startswith("| ") and not row.startswith("| short form")}
    for short, title in PAPERS.items():
        assert short in rows, f"no References row for {short}"
        assert f"*{title}" in rows[short], f"{short}: title missing or not in italics"


def test_index_links_every_page_of_the_manual():
    linked = {(INDEX.parent / t.partition("#")[0]).resolve() for t in links(INDEX)}
    missing = [p.name for p in DOCS.glob("*.md") if p != INDEX and p.resolve() not in linked]
    assert not missing, f"docs/index.md does not link {missing}"


def test_readme_links_the_manual():
    targets = {t.partition("#")[0] for t in links(README)}
    assert "docs/index.md" in targets


def test_usage_python_blocks_run_in_order():
    """docs/usage.md's Python examples are one session, run as written."""
    code = blocks(DOCS / "usage.md", "python")
    assert len(code) >= 5
    namespace: dict = {}
    for index, block in enumerate(code):
        exec(compile(block, f"docs/usage.md python block {index}", "exec"), namespace)
    assert namespace["T"].shape == (64, 3)
    assert namespace["best"].best.config.machines <= 20


def command_lines(page: Path) -> list[str]:
    """Every `perfmodel ...` line of the page's bash blocks, comments dropped."""
    lines = []
    for block in blocks(page, "bash"):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["perfmodel"]:
                lines.append(line)
    return lines


@pytest.mark.parametrize("page", [README, DOCS / "usage.md"], ids=["README.md", "docs/usage.md"])
def test_documented_commands_parse(page):
    """Every flag the README and the manual show is one the CLI accepts."""
    from perfmodel.cli import build_parser

    lines = command_lines(page)
    assert lines
    for line in lines:
        try:
            build_parser().parse_args(shlex.split(line, comments=True)[1:])
        except SystemExit as exit_:
            pytest.fail(f"{page.name}: `{line}` does not parse (exit {exit_.code})")


def test_readme_command_line_tour_runs(tmp_path):
    """The README's command-line tour runs as written beside a copy of examples/."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    tour = [b for b in blocks(README, "bash") if "perfmodel zoo list" in b]
    assert len(tour) == 1
    script = 'perfmodel() { "$PERFMODEL_PYTHON" -m perfmodel "$@"; }\nset -e\n' + tour[0]
    env = {**os.environ, "PERFMODEL_PYTHON": sys.executable,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


#: What a user reads besides the pages: docstrings and messages in the package,
#: the notebooks, the shipped examples and test data.
SOURCES = sorted([*ROOT.glob("perfmodel/**/*.py"), *ROOT.glob("optimizer/**/*.py"),
                  *ROOT.glob("notebooks/*.ipynb"), *ROOT.glob("examples/**/*.*"),
                  *ROOT.glob("tests/data/**/*.md"), *ROOT.glob("tests/data/*.csv")])


@pytest.mark.parametrize("pattern", FORBIDDEN)
def test_no_internal_references_in_code_and_notebooks(pattern):
    hits = []
    for path in SOURCES:
        text = path.read_text(encoding="utf-8", errors="replace")
        hits += [f"{path.relative_to(ROOT)}: {m.group(0)}"
                 for m in re.finditer(pattern, text, flags=re.I)]
    assert not hits, hits[:10]
