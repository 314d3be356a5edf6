"""The docs cannot drift: the configuration reference is the schema rendered, links resolve,
and the sweep file shown in docs/sweeps.md is one the sweep reader accepts."""

from __future__ import annotations

import re
import tomllib

import pytest
from conftest import REPO_ROOT
from ssdlab import doc_tables, docs
from ssdlab.sweep import load_sweep

DOCS = REPO_ROOT / "docs"
# Pages whose links this test follows (the ones this part of the docs owns, and the READMEs).
PAGES = [
    REPO_ROOT / "README.md",
    REPO_ROOT / "examples" / "README.md",
    DOCS / "quickstart.md",
    DOCS / "configuration.md",
    DOCS / "studies.md",
    DOCS / "sweeps.md",
    DOCS / "results.md",
    DOCS / "traces.md",
    DOCS / "steady-state.md",
    DOCS / "validation.md",
    DOCS / "performance.md",
]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def test_configuration_reference_is_the_schema_rendered():
    committed = (DOCS / "configuration.md").read_text(encoding="utf-8")
    assert committed == docs.render(), (
        "docs/configuration.md is out of date with the config schema: run `make docs`"
    )


def test_configuration_reference_documents_every_section():
    text = docs.render()
    for section in ("[host]", "[controller]", "[cache]", "[ftl]", "[flash]", "[flash.timing]"):
        assert f"## `{section}`" in text
    assert "## `[[flows]]`" in text
    assert "| `channels` | integer | `8` |" in text


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO_ROOT)))
def test_relative_links_resolve(page):
    text = page.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        path = (page.parent / target).resolve()
        assert path.exists(), f"{page.name} links to {target}, which does not exist"


def test_sweep_file_in_the_docs_is_accepted():
    text = (DOCS / "sweeps.md").read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[axes]" in b]
    assert blocks, "docs/sweeps.md shows no sweep file"
    for block in blocks:
        sweep = load_sweep(tomllib.loads(block), base_dir=REPO_ROOT / "examples")
        assert sweep.points


@pytest.mark.parametrize("name", sorted(doc_tables.TABLES))
def test_tables_of_figures_are_what_the_code_computes(name):
    table = doc_tables.TABLES[name]
    assert doc_tables.committed(REPO_ROOT, name) == table.render(REPO_ROOT), (
        f"{table.page}: the generated table `{name}` ({table.about}) is out of date with the "
        f"code: run `python -m ssdlab.doc_tables {name}` and reread the prose around it"
    )


def test_every_generated_table_in_the_docs_has_a_generator():
    pages = [REPO_ROOT / "README.md", *sorted(DOCS.glob("*.md"))]
    for page in pages:
        for name in doc_tables.blocks(page.read_text(encoding="utf-8")):
            assert name in doc_tables.TABLES, f"{page.name}: no generator for table `{name}`"
            assert (REPO_ROOT / doc_tables.TABLES[name].page) == page, name
