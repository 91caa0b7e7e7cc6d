"""mkdocs hook (mkdocs.yml `hooks:`): adds the generated pages of scripts/docs_site.py to the build,
and makes each page's links to repository files (outside docs/) work on the site."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_site import all_pages, rewrite_links


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    for rel, text in all_pages().items():
        if files.get_file_from_path(rel) is None:
            files.append(File.generated(config, rel, content=text))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    return rewrite_links(markdown, page.file.src_uri)
