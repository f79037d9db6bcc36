"""The docs hold together: every relative link of the README and docs/ reaches a file and,
with an anchor, a heading of it; the user's docs keep their paragraphs short; the lab notes
are apart from them."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "lab").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
LONGEST = 1000  # characters of a paragraph or a list item (tables and code blocks aside)


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of ``path``'s headings (a repeated one numbered -1, -2, ...), and
    its ``<a id="...">`` anchors."""
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    out, seen = set(re.findall(r'<a id="([^"]+)">', text)), {}
    for m in re.finditer(r"^#+ (.*)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", re.sub(r"[`*_]", "", m.group(1).strip().lower())).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def paragraphs(text: str):
    """Each paragraph and each list item, code blocks and table rows left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    for block in re.split(r"\n\s*\n", text):
        item: list[str] = []
        for line in block.splitlines():
            if line.lstrip().startswith("|"):
                continue
            if re.match(r"\s*(?:[*-] |\d+\. )", line) and item:
                yield " ".join(item)
                item = []
            item.append(line.strip())
        if item:
            yield " ".join(item)


def test_every_relative_link_reaches_its_file_and_heading():
    broken = []
    for doc in DOCS:
        text = re.sub(r"```.*?```", "", doc.read_text(encoding="utf-8"), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            where = (doc.parent / path).resolve() if path else doc
            if not where.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
            elif anchor and where.suffix == ".md" and anchor not in anchors(where):
                broken.append(f"{doc.name}: {target} (no such heading)")
    assert broken == []


def test_the_users_docs_keep_their_paragraphs_short():
    for name in ("README.md", "docs/guide.md", "docs/design.md", "docs/devquiz.md", "docs/benchmarks.md"):
        longest = max(paragraphs((ROOT / name).read_text(encoding="utf-8")), key=len)
        assert len(longest) <= LONGEST, (name, longest[:80])


def test_the_readme_links_the_guide_first_and_the_lab_notes_stay_in_the_lab():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    docs = [t for t in LINK.findall(readme) if t.startswith("docs/")]
    assert docs and docs[0].startswith("docs/guide.md")
    assert all(doc.read_text(encoding="utf-8").startswith("# Lab: ") for doc in DOCS if doc.parent.name == "lab")
    assert len((ROOT / "docs" / "benchmarks.md").read_text().splitlines()) <= 400
    assert len((ROOT / "docs" / "devquiz.md").read_text().splitlines()) <= 300
