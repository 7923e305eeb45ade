#!/usr/bin/env python3
"""`git rutter timeline` in a real browser: headless Chromium driven by Selenium.

Usage: tests/timeline_browser.py BINARY

Needs Debian's `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver; other
paths through CHROMIUM and CHROMEDRIVER) and `selenium` from PyPI; `.ci/run` installs them and
runs this after `cargo test`. Normative text: spec/timeline.md.

It builds its own hermetic vaults with the real binary:

1. a small one: captures at pinned times in two projects and by two clients, one of them with a
   hostile summary (`<script>…</script><img src=x onerror=…>`), one retracted, one citing a note
   edited since, and a use log. The page `timeline -o` writes is loaded from a file:// URL and
   must: log nothing on the console; make no network request but the file itself (the
   browser's performance log and the page's own resource timing); show as many decisions as
   `recent --all --json` has steps; narrow them when a word is typed or a project or a client
   chosen, to what `recent --all --json` gives with the same --grep, --project or --client;
   run no hostile summary and add no element for it; and refuse markup from script (its
   Content-Security-Policy requires Trusted Types).
2. one with bidi controls: a cited note named with U+202E and a forged line whose client and
   project hold U+202E; the page must show each control as `\\u{202E}`, put each field in a
   bidi isolate of its own, and draw the hash after the path and the next summary in order.
3. a large one: 10,000 or so decisions from tools/gen_vault.py, adopted by `init`. Its page
   must show every decision; the time to write it, to load it and to filter it are printed
   (a loose bound only guards against a page that hangs, not a timing to meet here: the
   benchmark, `cargo bench --bench timeline`, measures the release build).

Exits non-zero on any failure.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
HOSTILE = ('Tried <script>window.pwned=1</script><img src=x onerror="window.pwned=2"> '
           'as a summary.')
# A page that takes longer than this to load has hung; the real figures are printed.
LOOSE_BOUND_S = 20.0


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def hermetic_env(home: Path) -> dict:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TZ": "UTC",
        "GIT_AUTHOR_NAME": "Test User",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test User",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }


class Vault:
    def __init__(self, binary: str, path: Path, env: dict):
        self.binary, self.path, self.env = binary, path, env

    def run(self, *cmd, extra=None, cwd=None) -> str:
        env = dict(self.env, **(extra or {}))
        r = subprocess.run(cmd, cwd=cwd or self.path, env=env, capture_output=True, text=True)
        if r.returncode != 0:
            raise AssertionError(f"{cmd} failed ({r.returncode}): {r.stderr}")
        return r.stdout + r.stderr

    def rutter(self, *args, extra=None) -> str:
        return self.run(self.binary, "--vault", str(self.path), *args, extra=extra)

    def recent_count(self, *args) -> int:
        answer = json.loads(self.rutter("recent", "--all", "--json", *args))
        return sum(len(s["steps"]) for s in answer["sessions"])

    def git_repo(self) -> None:
        self.run("git", "init", "-q", "-b", "main")
        self.run("git", "add", "-A", "--", ".", ":(exclude)_librarian")
        self.run("git", "commit", "-qm", "notes")
        self.rutter("init")


def small_vault(binary: str, root: Path, env: dict) -> Vault:
    v = Vault(binary, root / "vault", env)
    (v.path / "Notes").mkdir(parents=True)
    (v.path / "Notes/a.md").write_text("# Alpha\n\nThe alpha note.\n")
    (v.path / "Notes/b.md").write_text("# Beta\n\nThe beta note.\n")
    v.git_repo()
    captures = [
        ("2026-11-29T10:00:00.000Z", "alpha", "claude", "Chose SQLite for the index.", ["Notes/a.md"]),
        ("2026-11-30T09:00:00.000Z", "beta", "codex", "Kept the schema in one file.", []),
        ("2026-11-30T09:30:00.000Z", "beta", "codex", "A mistake to retract.", []),
        ("2026-11-30T10:00:00.000Z", "beta", "claude", HOSTILE, ["Notes/b.md"]),
        ("2026-12-01T08:00:00.000Z", "alpha", "codex", "Moved the docs to one folder.", []),
    ]
    for ts, project, client, summary, refs in captures:
        cwd = root / project
        cwd.mkdir(exist_ok=True)
        args = ["capture", "--client", client, "--summary", summary,
                "--session", f"{project}-{client}", "--cwd", str(cwd)]
        for r in refs:
            args += ["--ref", r]
        v.rutter(*args, extra={"RUTTER_TIMESTAMP": ts})
    v.rutter("retract", "20261130T093000", "--reason", "not a decision")
    (v.path / "Notes/a.md").write_text("# Alpha\n\nEdited since it was cited.\n")
    log = v.path / "_librarian/stateful-use.jsonl"
    log.write_text("".join(
        json.dumps({"ts": ts, "kind": kind}) + "\n" for ts, kind in [
            ("2026-11-24T10:00:00.000Z", "librarian-recent"),
            ("2026-11-30T10:00:00.000Z", "librarian-recent"),
            ("2026-11-30T11:00:00.000Z", "search-signal"),
            ("2026-12-01T09:00:00.000Z", "librarian-recent"),
        ]))
    return v


def large_vault(binary: str, root: Path, env: dict) -> Vault:
    v = Vault(binary, root / "large", env)
    script = Path(__file__).resolve().parent.parent / "tools/gen_vault.py"
    subprocess.run([sys.executable, str(script), "--out", str(v.path), "--notes", "300",
                    "--days", "530", "--seed", "7", "--end-date", "2026-11-30"],
                   env=env, check=True, capture_output=True)
    v.git_repo()
    return v


def browser(profile: Path) -> webdriver.Chrome:
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    # Without the background-networking switches Chromium's own connections (component
    # updates, sync, field trials) fail noisily on a closed network and fill the logs.
    for arg in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--no-default-browser-check",
                f"--user-data-dir={profile}"]:
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    return webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)


def load(driver: webdriver.Chrome, page: Path) -> dict:
    """Loads `page` on a blank tab, logs drained first; returns the console entries, the
    requests the browser sent meanwhile, and the page's timings."""
    driver.get("about:blank")
    time.sleep(0.5)
    driver.get_log("browser")
    driver.get_log("performance")
    url = page.resolve().as_uri()
    started = time.monotonic()
    driver.get(url)
    loaded = time.monotonic() - started
    # The first frame after the load event: the decisions laid out and painted.
    frame = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => requestAnimationFrame(() => done(performance.now())));")
    nav = driver.execute_script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd};")
    requests = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requests.append(message["params"]["request"]["url"])
    return {
        "url": url,
        "console": driver.get_log("browser"),
        "requests": requests,
        "resources": driver.execute_script(
            "return performance.getEntriesByType('resource').map(r => r.name);"),
        "wall_s": loaded,
        "dcl_ms": nav["dcl"],
        "load_ms": nav["load"],
        "frame_ms": frame,
    }


def shown(driver: webdriver.Chrome) -> int:
    """Decisions shown: in the page and under no hidden element."""
    return driver.execute_script(
        "return [...document.querySelectorAll('li.decision')]"
        ".filter(li => li.closest('[hidden]') === null).length;")


def set_filter(driver, text="", project="", client="") -> int:
    driver.execute_script(
        """
        const [text, project, client] = arguments;
        const t = document.getElementById('text');
        t.value = text;
        t.dispatchEvent(new Event('input'));
        for (const [id, v] of [['project', project], ['client', client]]) {
          const s = document.getElementById(id);
          s.value = v;
          s.dispatchEvent(new Event('change'));
        }
        """, text, project, client)
    # The words box applies on the next frame.
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => requestAnimationFrame(() => done()));")
    return shown(driver)


def check_clean_load(got: dict) -> None:
    check(got["console"] == [], f"the console is empty: {got['console']}")
    # The browser's own pages (chrome://) are not the page's requests; anything else is.
    own = [u for u in got["requests"]
           if not u.startswith(("chrome://", "chrome-untrusted://", "devtools://"))]
    check(own == [got["url"]], f"the only request is the file itself: {own}")
    check(got["resources"] == [], f"the page fetched nothing: {got['resources']}")


def small(driver, binary: str, root: Path, env: dict) -> None:
    v = small_vault(binary, root, env)
    page = root / "timeline.html"
    v.rutter("timeline", "-o", str(page))
    got = load(driver, page)
    check_clean_load(got)

    expected = v.recent_count()
    check(expected == 4, f"four decisions are not retracted: {expected}")
    check(shown(driver) == expected, f"{shown(driver)} decisions shown, {expected} expected")
    count = driver.execute_script("return document.getElementById('count').textContent;")
    check(count == f"{expected} decisions", f"the count says so: {count!r}")

    # The hostile summary is text: it ran nothing and added no element.
    check(driver.execute_script("return window.pwned === undefined;"), "window.pwned is set")
    check(driver.execute_script("return document.querySelectorAll('img').length;") == 0,
          "an <img> came from the data")
    check(driver.execute_script("return document.scripts.length;") == 2,
          "a <script> came from the data")
    summaries = driver.execute_script(
        "return [...document.querySelectorAll('.summary')].map(s => s.textContent);")
    check(HOSTILE in summaries, f"the hostile summary is shown as text: {summaries}")
    check(driver.execute_script(
        "return [...document.querySelectorAll('.summary')]"
        ".every(s => s.children.length === 0);"), "a summary holds an element")
    drift = driver.execute_script(
        "return [...document.querySelectorAll('.drift')].map(s => s.textContent);")
    check(drift == ["(changed since capture)"], f"the edited note's drift: {drift}")
    bars = driver.execute_script("return document.querySelectorAll('svg rect').length;")
    check(bars > 0, "the chart has bars")

    # The filter narrows, as --grep, --project and --client do.
    for text, project, client, args in [
        ("sqlite", "", "", ["--grep", "sqlite"]),
        ("SCHEMA one", "", "", ["--grep", "schema one"]),
        ("", "beta", "", ["--project", "beta"]),
        ("", "", "codex", ["--client", "codex"]),
        ("", "alpha", "codex", ["--project", "alpha", "--client", "codex"]),
        ("nothing-matches", "", "", ["--grep", "nothing-matches"]),
    ]:
        n = set_filter(driver, text, project, client)
        want = v.recent_count(*args)
        check(n == want, f"filter {text!r} {project!r} {client!r}: {n} shown, {want} expected")
        check(n < expected, f"filter {text!r} {project!r} {client!r} narrows: {n}")
    check(set_filter(driver) == expected, "clearing the filter shows every decision")
    check(driver.execute_script("return document.querySelectorAll('section.day:not([hidden])').length;") == 3,
          "three days shown")

    # The policy is in force: markup from script is refused (Trusted Types), so no string
    # can become an element or a script even through a mistake in the page's own code.
    refused = driver.execute_script(
        """
        const out = [];
        try { document.body.insertAdjacentHTML('beforeend', '<img src=x onerror="window.pwned=3">'); out.push('html allowed'); }
        catch (e) { out.push(e.name); }
        try { const s = document.createElement('script'); s.textContent = 'window.pwned=4'; document.body.append(s); out.push('script allowed'); }
        catch (e) { out.push(e.name); }
        return out;
        """)
    check(refused == ["TypeError", "TypeError"], f"the policy refuses markup: {refused}")
    check(driver.execute_script("return window.pwned === undefined;"), "window.pwned is set")
    print(f"small vault: {expected} decisions, no console entry, no request, filters narrow, "
          "the hostile summary is text")


RLO = "\u202e"


def bidi(driver, binary: str, root: Path, env: dict) -> None:
    """A note named with U+202E, cited by a capture, and a forged line whose client and project
    end with U+202E: each is drawn with the control shown as \\u{202E}, each field in its own
    bidi isolate, and the neighbouring field (the hash, the summary) in its own order."""
    v = Vault(binary, root / "bidi", env)
    name = f"Notes/rlo{RLO}dm.md"
    (v.path / "Notes").mkdir(parents=True)
    (v.path / name).write_text("x\n")
    v.git_repo()
    v.rutter("capture", "--summary", "cites a bidi name", "--session", "b1", "--ref", name,
             extra={"RUTTER_TIMESTAMP": "2026-11-30T10:00:00.000Z"})
    day = sorted((v.path / "_librarian/sessions").glob("*.md"))[0]
    entry = {"id": "20261130T110000000Z-zz-0001", "session_id": "forged",
             "time": "2026-11-30T11:00:00.000Z", "summary": "exe.png is the file",
             "client": f"claude{RLO}", "workspace": {"cwd": "/w", "project": f"{RLO}proj"},
             "refs": []}
    with day.open("a") as f:
        f.write(f"- 11:00:00 — forged <!-- rutter:entry {json.dumps(entry)} -->\n")
    page = root / "bidi.html"
    v.rutter("timeline", "-o", str(page))
    got = load(driver, page)
    check_clean_load(got)
    check(RLO not in driver.execute_script("return document.body.innerText;"),
          "the page draws a raw U+202E")
    fields = driver.execute_script(
        "return [...document.querySelectorAll('bdi')].map(b => "
        "[b.className, b.textContent, getComputedStyle(b).unicodeBidi]);")
    check(all(bidi == "isolate" for _, _, bidi in fields), f"every field is isolated: {fields}")
    shown_as = {cls: text for cls, text, _ in fields if cls in ("path", "client")}
    check(shown_as.get("path") == "Notes/rlo\\u{202E}dm.md", f"the path: {shown_as}")
    check(shown_as.get("client") == "claude\\u{202E}", f"the client: {shown_as}")
    projects = driver.execute_script(
        "return [...document.querySelectorAll('.project h3')].map(h => h.textContent);")
    check("\\u{202E}proj" in projects, f"the project: {projects}")
    # Drawn in order: the hash after the path, the summary after the client, and the
    # summary's own text left to right.
    order = driver.execute_script(
        """
        const box = (e) => e.getBoundingClientRect();
        const ref = document.querySelector('ul.refs code');
        const path = box(ref.querySelector('.path')), hash = box(ref.querySelector('.hash'));
        const li = [...document.querySelectorAll('li.decision')]
          .find(l => l.querySelector('.client') && l.querySelector('.client').textContent.startsWith('claude\\\\'));
        const client = box(li.querySelector('.client'));
        const summary = li.querySelector('.summary');
        const text = summary.firstChild, r = document.createRange();
        const at = (i) => { r.setStart(text, i); r.setEnd(text, i + 1); return r.getBoundingClientRect().left; };
        return {hash_after_path: hash.left >= path.right - 1,
                summary_after_client: box(summary).left >= client.right - 1,
                summary_left_to_right: at(0) < at(text.length - 1),
                summary: summary.textContent, hash: ref.querySelector('.hash').textContent};
        """)
    check(order["hash_after_path"] and order["hash"].startswith("sha256:"),
          f"the hash is drawn after the path: {order}")
    check(order["summary_after_client"] and order["summary_left_to_right"]
          and order["summary"] == "exe.png is the file",
          f"the summary next to the client is unaffected: {order}")
    print("bidi names: the controls are shown as \\u{202E}, each field isolated, "
          "the hash and the next summary drawn in order")


def large(driver, binary: str, root: Path, env: dict) -> None:
    v = large_vault(binary, root, env)
    expected = v.recent_count()
    check(expected >= 10_000, f"the generated vault holds 10,000 decisions: {expected}")
    page = root / "large.html"
    started = time.monotonic()
    v.rutter("timeline", "-o", str(page))
    written = time.monotonic() - started
    got = load(driver, page)
    check_clean_load(got)
    check(shown(driver) == expected, f"{shown(driver)} decisions shown, {expected} expected")
    started = time.monotonic()
    narrowed = set_filter(driver, "decision")
    filtered = time.monotonic() - started
    check(0 < narrowed < expected, f"the filter narrows 10,000 decisions: {narrowed}")
    check(got["wall_s"] < LOOSE_BOUND_S, f"the page loads: {got['wall_s']:.1f} s")
    size = page.stat().st_size / 1e6
    print(f"large vault: {expected} decisions, {size:.1f} MB page; written in {written * 1e3:.0f} ms "
          f"(this build of {Path(binary).parent.name}), DOMContentLoaded {got['dcl_ms']:.0f} ms, "
          f"load {got['load_ms']:.0f} ms, first frame after load {got['frame_ms']:.0f} ms "
          f"(driver.get {got['wall_s'] * 1e3:.0f} ms); filter by a word {filtered * 1e3:.0f} ms "
          f"({narrowed} shown)")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = str(Path(sys.argv[1]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = hermetic_env(root / "home")
        (root / "home/.config").mkdir(parents=True)
        driver = browser(root / "profile")
        try:
            small(driver, binary, root, env)
            bidi(driver, binary, root, env)
            large(driver, binary, root, env)
        finally:
            driver.quit()
    print("timeline browser test: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
