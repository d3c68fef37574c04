"""The docs site opened as files (``site/index.html`` over ``file://``), navigation and search
included, with nothing loaded from the network.

A MkDocs hook (``hooks:`` in ``mkdocs.yml``; ``use_directory_urls: false`` there makes every
link name its ``.html`` file, so that a link followed from the file system opens a page, not
a directory listing). Search needs two things a browser refuses to a ``file://`` page, and
Material for MkDocs' own offline plugin fetches a polyfill for one of them from unpkg.com;
this hook writes both into the site instead:

* ``search/search_index.js``: the search index as a script (``var __index = ...``), which the
  theme loads on ``file://`` in place of ``search_index.json`` (a page cannot fetch a file);
* ``assets/javascripts/file-worker.js``: on ``file://`` only, the search worker is started
  from a ``Blob`` of its own source, inlined here (a page cannot start a ``Worker`` from a
  file). It is listed in the theme's ``extra.polyfills``, loaded before the theme's bundle.

Served over HTTP (``mkdocs serve``, any web server) neither is used.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: The polyfill, relative to the site's root.
POLYFILL = "assets/javascripts/file-worker.js"

_SHIM = """// utilityguard docs (scripts/offline_site.py): the search worker on file:// pages
(function () {
  if (location.protocol !== "file:") return;
  var source = %s;
  var Native = window.Worker;
  window.Worker = function (url, options) {
    if (String(url).indexOf("/workers/search.") === -1) return new Native(url, options);
    var blob = new Blob([source], {type: "text/javascript"});
    return new Native(URL.createObjectURL(blob), options);
  };
})();
"""


def on_config(config: Any) -> Any:
    """List the polyfill before the theme's scripts (``extra.polyfills``)."""
    polyfills = list(config.extra.get("polyfills") or [])
    if POLYFILL not in polyfills:
        polyfills.append(POLYFILL)
    config.extra["polyfills"] = polyfills
    return config


def on_post_build(config: Any) -> None:
    """Write the search index as a script and the worker polyfill with its source."""
    site = Path(config.site_dir)
    index = site / "search" / "search_index.json"
    if index.is_file():
        (site / "search" / "search_index.js").write_text(
            "var __index = " + index.read_text(encoding="utf-8"), encoding="utf-8")
    workers = sorted((site / "assets" / "javascripts" / "workers").glob("search.*.js"))
    workers = [w for w in workers if not w.name.endswith(".map")]
    source = workers[0].read_text(encoding="utf-8") if workers else ""
    shim = site / POLYFILL
    shim.parent.mkdir(parents=True, exist_ok=True)
    # the JSON string is a JavaScript string literal; "</" cannot end a script element
    shim.write_text(_SHIM % json.dumps(source).replace("</", "<\\/"), encoding="utf-8")
