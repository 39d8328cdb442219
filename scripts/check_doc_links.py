"""Check the links between the documentation's pages: every relative link in README.md, CHANGELOG.md,
ARCHITECTURE.md, docs/*.md and bench/README.md names a file or folder that exists, and every
#anchor a heading of the page it points into, as GitHub makes heading anchors.

    python3 scripts/check_doc_links.py        # from any folder; exit 1 on a broken link
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(path):
    """The page's lines outside fenced code blocks, with inline code blanked."""
    fenced = False
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            yield number, re.sub(r"`[^`]*`", lambda code: "`" + " " * (len(code.group()) - 2) + "`", line)


def anchors(path):
    """GitHub's anchors of the page's headings: lower case, punctuation dropped, spaces as
    hyphens, a repeated one suffixed -1, -2, ..."""
    seen = {}
    fenced = False
    for line in open(path, encoding="utf-8"):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        heading = re.match(r"#{1,6} (.*)", line)
        if fenced or not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        yield slug if count == 0 else f"{slug}-{count}"


def main():
    # Pages and links are relative to the repository root, wherever this runs from.
    os.chdir(ROOT)
    pages = ["README.md", "ARCHITECTURE.md", "CHANGELOG.md", "bench/README.md", *sorted(glob.glob("docs/*.md"))]
    broken = []
    for page in pages:
        for number, line in prose(page):
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):
                    continue  # https:, mailto:
                file, _, anchor = target.partition("#")
                resolved = os.path.normpath(os.path.join(os.path.dirname(page), file)) if file else page
                if not os.path.exists(resolved):
                    broken.append(f"{page}:{number}: {target}: no file {resolved}")
                elif anchor and anchor not in set(anchors(resolved)):
                    broken.append(f"{page}:{number}: {target}: no heading #{anchor} in {resolved}")
    print("\n".join(broken) if broken else f"links resolve in {len(pages)} pages")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
