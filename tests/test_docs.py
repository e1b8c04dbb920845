"""The manual (docs/, mkdocs.yml) is checked like code.

- It builds with the real `mkdocs build --strict` (a broken link or anchor, a page missing from the nav or a failing
  generation script fails the build), and the built configuration reference names every key of
  `workflow/schemas/config.schema.yaml`, nested ones included, with its default.
- Every command in a block the pages mark as runnable is one that CI or a test runs. The marker is an HTML comment
  right before a fenced block naming where it runs: `<!-- runnable: .ci/run -->` or
  `<!-- runnable: tests/test_x.py::test_name -->` (several places, separated by spaces). Each line of the block is
  a command (a `# comment` after it is dropped; `a && b` is two commands), and each command must be run by one of
  the places named: for `.ci/run`, the command (spaces collapsed) is part of a line of `.ci/run`; for a test, the
  function exists and every word of the command is a string literal of it (the program, `.venv/bin/` and
  `python -m` left off, may instead be a function it calls), so the test runs that command, possibly with more
  options than the page shows (a `--directory`, a `--dry-run`).
- Every YAML block marked `<!-- config -->` is part of a valid config: put over `config.yaml` (its top-level keys
  replacing those of the file), it passes `workflow/schemas/config.schema.yaml`.
- README.md stays at most 150 lines, and each of its relative links reaches a file (a link into docs/ with an
  anchor reaches that anchor of the built page).
- The language-pair guide's config, built the way the guide says (a copy of config.yaml with its datasets
  replaced by the guide's block), is planned by the real Snakemake: its keys, languages, directions and files pass
  every start-up check.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import MODEL_STORE, ROOT, WMT

DOCS = ROOT / "docs"
SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
CONFIG_BLOCK = re.compile(r"<!-- config -->\n```yaml\n(?P<body>.*?)\n```", re.DOTALL)
RUNNABLE = re.compile(r"<!-- runnable: (?P<places>[^>]+?) -->\n```[^\n]*\n(?P<body>.*?)\n```", re.DOTALL)
#: A map's key (a dataset's or model's name) in a key path of the reference, e.g. `datasets.<dataset>.label`.
NAME = r"<[a-z_]+>"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built by the real mkdocs, strictly, from this checkout (nothing is written into the checkout)."""
    out = tmp_path_factory.mktemp("site")
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
                             "--site-dir", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    return out


class Cells(HTMLParser):
    """The text of every `<code>` element and every table row (its cells' texts) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []
        self.rows: list[list[str]] = []
        self._code: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "code":
            self._code = []
        elif tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "code" and self._code is not None:
            self.codes.append("".join(self._code))
            self._code = None
        elif tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        for sink in (self._code, self._cell):
            if sink is not None:
                sink.append(data)


def parse(page: Path) -> Cells:
    cells = Cells()
    cells.feed(page.read_text(encoding="utf-8"))
    return cells


def resolve(node: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """Follow a `$ref` of the schema (keys beside it kept)."""
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def schema_keys(node: dict[str, Any], schema: dict[str, Any], prefix: list[str] | None = None) -> list[tuple[list[str], dict]]:
    """Every key path of the schema as a list of segments (None for a map's key), with the key's own node."""
    node = resolve(node, schema)
    prefix = prefix or []
    found: list[tuple[list[str], dict]] = []
    objects = [node] + [resolve(b, schema) for b in node.get("oneOf", [])]
    for obj in objects:
        for key, child in obj.get("properties", {}).items():
            child = resolve(child, schema)
            found.append((prefix + [key], child))
            found += schema_keys(child, schema, prefix + [key])
        mapped = obj.get("additionalProperties")
        if isinstance(mapped, dict):
            mapped = resolve(mapped, schema)
            found.append((prefix + [None], mapped))
            found += schema_keys(mapped, schema, prefix + [None])
    return found


def pattern(path: list[str | None]) -> re.Pattern[str]:
    return re.compile(r"\.".join(NAME if seg is None else re.escape(seg) for seg in path))


#: A laptop's browser window: Material shows the navigation beside the page from 1220 px on.
WINDOW = (1280, 900)
#: What the page's script shows for every code block: how far it scrolls sideways, whether its copy button is there,
#: its first line; and every configuration key or default (the reference's first and third cells) broken over lines.
MEASURE = """
return {blocks: [...document.querySelectorAll('.md-content pre')].map(pre => {
          const code = pre.querySelector('code');
          return {overflow: code.scrollWidth - code.clientWidth, first: code.innerText.split('\\n')[0],
                  copy: !!pre.querySelector('button[data-md-type="copy"], .md-clipboard')};
        }),
        broken: [...document.querySelectorAll('.md-typeset table td:first-child code, .md-typeset table td:nth-child(3) code')]
          .filter(code => code.getClientRects().length > 1).map(code => code.innerText)};
"""


def served(folder: Path):
    """`folder` served over HTTP on 127.0.0.1 (a thread), as `mkdocs serve` or any web server would; the server."""
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_every_code_block_fits_a_laptop_window_and_has_its_copy_button(site, tmp_path):
    """Every page of the built site in a real headless Chromium, at 1280 px: no code block scrolls sideways (a config
    example's comment cut at the right edge goes unread), each has its copy button (added by the page's script), and
    no key or default of the configuration reference is broken over two lines."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    from browser import chrome

    pages = sorted(path.relative_to(site).as_posix() for path in site.rglob("index.html") if "assets" not in path.parts)
    assert len(pages) > 15 and "reference/config/index.html" in pages
    server = served(site)
    driver = chrome(tmp_path, *WINDOW)
    found: dict[str, list] = {}
    try:
        for page in pages:
            driver.get(f"http://127.0.0.1:{server.server_port}/{page}")
            ready = "return [...document.querySelectorAll('.md-content pre')].every(pre => pre.querySelector('button'))"
            try:  # the script adds the buttons after the page loads
                WebDriverWait(driver, 5).until(lambda d: d.execute_script(ready))
            except TimeoutException:
                pass  # measured as it is: a block without its button is named below
            measured = driver.execute_script(MEASURE)
            problems = [f"{block['first'][:60]!r}: " + ("scrolls %d px sideways" % block["overflow"] if block["overflow"] > 0
                                                        else "no copy button")
                        for block in measured["blocks"] if block["overflow"] > 0 or not block["copy"]]
            problems += [f"{text!r} broken over two lines" for text in measured["broken"]]
            if problems:
                found[page] = problems
            found.setdefault("(blocks)", []).extend(measured["blocks"])
    finally:
        driver.quit()
        server.shutdown()
    blocks = found.pop("(blocks)")
    assert len(blocks) > 20  # the pages' code blocks were measured, not missed
    assert found == {}


def test_every_schema_key_is_in_the_built_reference_with_its_default(site):
    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    keys = schema_keys(schema, schema)
    assert len(keys) > 150  # the walk reaches $defs, maps and oneOf (the top level alone has 16 keys)
    reference = parse(site / "reference" / "config" / "index.html")
    rows = {row[0]: row for row in reference.rows if len(row) == 4}
    missing = [".".join(s or "<name>" for s in path) for path, _ in keys
               if not any(pattern(path).fullmatch(code) for code in reference.codes)]
    assert not missing, f"schema keys not in the built reference: {missing}"
    undescribed = [key for key, row in rows.items() if not row[3].strip()]
    assert not undescribed, f"keys with no description in the reference: {undescribed}"
    assert "datasets.<dataset>.source.files.<lang>" in rows  # a dataset's files are by language, the annotators' by dataset
    assert "annotation.files.<dataset>.<lang>" in rows
    for path, node in keys:
        if "default" not in node or None in path:
            continue
        key = ".".join(path)
        default = node["default"]
        cell = rows[key][2]
        if not isinstance(default, (list, dict)):
            if default is None or isinstance(default, bool):
                shown = {None: "null", True: "true", False: "false"}[default]
            else:
                shown = str(default) if default != "" else '""'
            assert cell == shown, f"{key}: default {default!r} shown as {cell!r}"
        else:
            assert cell.startswith("[" if isinstance(default, list) else "{"), (key, cell)
            assert all(str(v) in cell for v in (default if isinstance(default, list) else default.values())), (key, cell)


def test_console_scripts_page_lists_every_script(site):
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    page = parse(site / "reference" / "scripts" / "index.html")
    assert scripts and all(name in page.codes for name in scripts)


def commands(body: str) -> list[str]:
    """The commands of a runnable block: one per line, `&&` splits, a trailing `# comment` dropped."""
    found = []
    for line in body.splitlines():
        line = re.split(r"\s+#\s", line, maxsplit=1)[0].strip()
        found += [" ".join(part.split()) for part in line.split("&&") if part.strip()]
    return found


def runs_in_ci(command: str) -> bool:
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    return any(command in " ".join(line.split()) for line in lines if not line.lstrip().startswith("#"))


def runs_in_test(command: str, place: str) -> bool:
    file, _, name = place.partition("::")
    tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
    function = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == name), None)
    assert function is not None, f"{place}: no such test"
    strings = {node.value for node in ast.walk(function) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    called = {node.func.id for node in ast.walk(function) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    words = shlex.split(command)
    words[0] = words[0].removeprefix(".venv/bin/")
    if words[0] == "python" and words[1:2] == ["-m"]:
        words = words[2:]
    program, args = words[0], words[1:]
    return (program in strings or program in called) and all(arg in strings for arg in args)


def runnable_blocks() -> list[tuple[Path, list[str], str]]:
    blocks = []
    for page in sorted(DOCS.rglob("*.md")):
        for match in RUNNABLE.finditer(page.read_text(encoding="utf-8")):
            blocks.append((page, match["places"].split(), match["body"]))
    return blocks


def test_every_runnable_command_is_run_by_ci_or_a_test():
    blocks = runnable_blocks()
    assert len(blocks) >= 4, blocks  # the guides mark their tested commands; none found means the marker broke
    not_run = []
    for page, places, body in blocks:
        for place in places:
            assert place == ".ci/run" or (ROOT / place.partition("::")[0]).is_file(), f"{page}: {place} does not exist"
        for command in commands(body):
            if not any(runs_in_ci(command) if place == ".ci/run" else runs_in_test(command, place) for place in places):
                not_run.append(f"{page.relative_to(ROOT)}: {command!r} (said to run in {places})")
    assert not not_run, "runnable commands no test or CI runs:\n" + "\n".join(not_run)


def test_the_rule_rejects_a_command_nobody_runs():
    """The check above can fail: a command CI does not run, and one whose options a test does not pass, are caught."""
    assert runs_in_ci(".venv/bin/python -m pytest") and not runs_in_ci('.venv/bin/python -m pytest -m "not slow"')
    place = "tests/test_slurm.py::test_profile_submits_heavy_jobs_through_slurm_and_matches_a_local_run"
    assert runs_in_test(".venv/bin/snakemake --profile profiles/slurm", place)
    assert not runs_in_test(".venv/bin/snakemake --profile profiles/default", place)
    assert commands("bash install.sh && .venv/bin/snakemake --cores 2   # run it\n") == ["bash install.sh", ".venv/bin/snakemake --cores 2"]


def test_the_language_pair_guide_finds_its_languages():
    """The guide's step 1, as written: both languages of the example pair are entries of the registry."""
    result = subprocess.run(["grep", "-E", "^(cs|en):", "resources/languages.yaml"], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0
    assert sorted(line.split(":")[0] for line in result.stdout.splitlines()) == ["cs", "en"]


def test_the_language_pair_guide_plans_its_run(tmp_path):
    """The guide's steps 2 and 3: config.yaml copied, its datasets replaced by the guide's block, then planned by the
    real Snakemake (a dry run: the start-up checks and the DAG, no generation). Paths are the checkout's, as when
    the guide is followed in it."""
    if not WMT.is_dir():
        pytest.skip(f"WMT files not found at {WMT} (set CLSD_SHARED or place shared/ beside the project)")
    guide = (DOCS / "guides" / "language-pair.md").read_text(encoding="utf-8")
    assert "cp config.yaml my-pair.yaml" in guide
    block = re.search(r"## 2\. Write a config.*?```yaml\n(.*?)\n```", guide, re.DOTALL)
    config = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    config["datasets"] = yaml.safe_load(block[1])["datasets"]
    for dataset in config["datasets"].values():
        files = dataset["source"]["files"]
        for lang, path in files.items():
            files[lang] = str((WMT / Path(path).name) if path.startswith("../shared/data/wmt/") else ROOT / path)
    config["generation"]["prompt"] = str(ROOT / config["generation"]["prompt"])
    config["model_store"] = str(MODEL_STORE)
    (tmp_path / "my-pair.yaml").write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-m", "snakemake", "--snakefile", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
                             "--cores", "2", "--configfile", "my-pair.yaml", "--dry-run"], capture_output=True, text=True, env=env,
                            cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "generate_distractors" in result.stdout and "table2" in result.stdout


def test_readme_is_short_and_its_links_work(site):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#\s]+)(?:#([^)\s]+))?\)", readme)
    local = [(target, anchor) for target, anchor in links if not re.match(r"[a-z]+:", target)]
    assert len(local) >= 8, local  # the five guides, Getting started, the outputs, config/README.md
    broken = []
    for target, anchor in local:
        if not (ROOT / target).exists():
            broken.append(target)
        elif anchor:
            assert target.startswith("docs/") and target.endswith(".md"), f"{target}#{anchor}: only pages of docs/ are checked"
            page = target.removeprefix("docs/").removesuffix(".md")
            page = "" if page == "index" else page.removesuffix("/index")
            built = site / page / "index.html"
            if f'id="{anchor}"' not in built.read_text(encoding="utf-8"):
                broken.append(f"{target}#{anchor}")
    assert not broken, broken
    # two clicks to "my own language pair, evaluated": the README links the guide, whose steps end in Table 2
    assert ("docs/guides/language-pair.md", "") in local


def test_config_examples_of_the_guides_pass_the_schema():
    import jsonschema

    schema = yaml.safe_load(SCHEMA.read_text(encoding="utf-8"))
    base = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))
    blocks = [(page, match["body"]) for page in sorted(DOCS.rglob("*.md"))
              for match in CONFIG_BLOCK.finditer(page.read_text(encoding="utf-8"))]
    assert len(blocks) >= 5, blocks
    for page, body in blocks:
        config = {**base, **yaml.safe_load(body)}
        errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(config)]
        assert not errors, f"{page.relative_to(ROOT)}: {errors}"
    # the check can fail: a key the schema does not know is an error
    assert list(jsonschema.Draft202012Validator(schema).iter_errors({**base, "generation": {"modle": "x"}}))


class UniqueKeys(yaml.SafeLoader):
    """YAML as the pipeline reads it, except that a key repeated in one mapping is an error (PyYAML keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        keys = [self.construct_object(key, deep=deep) for key, _ in node.value]
        repeated = sorted({str(key) for key in keys if keys.count(key) > 1})
        if repeated:
            raise yaml.constructor.ConstructorError(None, None, f"repeated key(s) {repeated}", node.start_mark)
        return super().construct_mapping(node, deep=deep)


def test_every_yaml_block_copies_as_yaml_with_each_key_once():
    """A YAML block of the manual has a copy button: what it copies parses, with no key twice in one mapping and no
    `...` standing for keys left out."""
    blocks = [(page, match.group(1)) for page in sorted(DOCS.rglob("*.md"))
              for match in re.finditer(r"```yaml\n(.*?)\n```", page.read_text(encoding="utf-8"), flags=re.DOTALL)]
    assert len(blocks) >= 8
    for page, body in blocks:
        try:
            yaml.load(body, Loader=UniqueKeys)
        except yaml.YAMLError as error:
            pytest.fail(f"{page.relative_to(ROOT)}: {error}")
        assert "{...," not in body and "..., " not in body, f"{page.relative_to(ROOT)}: keys left out as ..."
    with pytest.raises(yaml.YAMLError, match="repeated"):  # the check can fail
        yaml.load("models:\n  a: {name: x}\n  a: {name: y}\n", Loader=UniqueKeys)


def test_the_validation_page_explains_every_reason_and_note():
    from clsd.validate.verdicts import JUDGE_REASON, RULE_REASONS, SUSPECTS
    page = (DOCS / "validation.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", page, flags=re.M))
    missing = [reason for reason in (*RULE_REASONS, JUDGE_REASON) if reason not in rows]
    assert not missing, f"reasons with no row in docs/validation.md's table: {missing}"
    assert all(f"`{note}`" in page for note in SUSPECTS)


FIGURE = re.compile(r"<!-- figure: (?P<name>[a-z0-9_]+) -->\**")


def quoted_figures() -> list[tuple[str, str, str]]:
    """Every `<!-- figure: name -->` marker of the README, config/README.md and docs/: (file, name, the text after it)."""
    pages = [ROOT / "README.md", ROOT / "config" / "README.md", *sorted(DOCS.rglob("*.md"))]
    return [(str(page.relative_to(ROOT)), match["name"], text[match.end():match.end() + 40])
            for page in pages for text in [page.read_text(encoding="utf-8")] for match in FIGURE.finditer(text)]



def figure_errors(quotes: list[tuple[str, str, str]], figures: dict[str, dict]) -> list[str]:
    """A line per quote that differs from docs/figures.yaml or names a figure it lacks, and per figure nobody quotes."""
    errors = [f"{page}: {name} is not in docs/figures.yaml" if name not in figures
              else f"{page}: {name} reads {after!r}, docs/figures.yaml says {figures[name]['value']!r}"
              for page, name, after in quotes if name not in figures or not after.startswith(str(figures[name]["value"]))]
    return errors + [f"{name} is quoted nowhere" for name in sorted(set(figures) - {name for _, name, _ in quotes})]


def test_every_quoted_figure_equals_its_one_source():
    """docs/figures.yaml holds each measured figure once; a page that quotes it marks the quote, and a quote that
    differs from the file (a figure updated in one place only) or a figure nobody quotes fails."""
    figures = yaml.safe_load((DOCS / "figures.yaml").read_text(encoding="utf-8"))
    quotes = quoted_figures()
    assert len(quotes) >= 20, quotes  # the README, Getting started, Tests and config/README.md mark their times
    errors = figure_errors(quotes, figures)
    assert not errors, "quoted figures that differ from their source:\n" + "\n".join(errors)
    assert all({"value", "what", "where"} <= set(entry) for entry in figures.values())


def test_a_quote_that_drifted_is_caught():
    """The check above can fail: a quote edited by hand, a figure the file lacks and one nobody quotes are named."""
    figures = {"rerun": {"value": "1 m 20 s"}, "install": {"value": "5 m 04 s"}}
    quotes = [("README.md", "rerun", "1 m 25 s** |"), ("docs/index.md", "rerun", "1 m 20 s** |"), ("docs/x.md", "other", "2 s")]
    assert figure_errors(quotes, figures) == ["README.md: rerun reads '1 m 25 s** |', docs/figures.yaml says '1 m 20 s'",
                                              "docs/x.md: other is not in docs/figures.yaml", "install is quoted nowhere"]
