#!/usr/bin/env python3
"""A third-party MCP client against `git-rutter mcp`: the official Python SDK (`pip install mcp`).

Usage: tests/mcp_client.py BINARY

It prepares its own hermetic vault (temp HOME, git repository, two notes, `git-rutter init`, one
capture citing Notes/a.md). It spawns `BINARY mcp` over stdio, lists the
three tools, reads the instructions, calls each tool, and checks that invalid arguments are
isError results. `librarian-get-note` of the cited note ends with the block of the decisions that
cited it (spec/mcp.md, "get-note's block"): after a rename the note is found at its new path with
the decision cited as the old one, and after an edit in place it says the note changed since; a
note nobody cited has no block. Exits non-zero on any failure. Normative text: spec/mcp.md.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client

SUMMARY = "Decided the alpha approach."
TOOLS = {"librarian-search", "librarian-get-note", "librarian-recent"}


def hermetic_env(home: Path) -> dict:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test User",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test User",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }


def prepare_vault(binary: str, root: Path, env: dict) -> Path:
    vault = root / "vault"
    (vault / "Notes").mkdir(parents=True)
    (vault / "Notes/a.md").write_text("# Alpha\n\nThe alpha note.\n")
    (vault / "Notes/b.md").write_text("# Beta\n\nThe beta note.\n")

    def run(*cmd):
        subprocess.run(cmd, cwd=vault, env=env, check=True, capture_output=True)

    run("git", "init", "-q", "-b", "main")
    run("git", "add", "Notes")
    run("git", "commit", "-qm", "notes")
    run(binary, "--vault", str(vault), "init")
    run(binary, "--vault", str(vault), "capture", "--summary", SUMMARY,
        "--ref", "Notes/a.md", "--session", "py-1")
    return vault


def check(cond: bool, what: str) -> None:
    if not cond:
        raise AssertionError(what)


def one_text(result) -> str:
    check(not result.is_error, f"unexpected isError result: {result}")
    check(len(result.content) == 1 and result.content[0].type == "text",
          f"expected one text block: {result.content}")
    return result.content[0].text


def tool_error(result) -> str:
    check(result.is_error is True, f"expected an isError result: {result}")
    check(len(result.content) == 1 and result.content[0].type == "text",
          f"expected one text block: {result.content}")
    return result.content[0].text


async def get_note_until(session, path: str, done) -> str:
    """get-note of `path` until `done(text)` holds (the server hears a change within 2 s)."""
    text = ""
    for _ in range(100):
        result = await session.call_tool("librarian-get-note", {"path": path})
        text = result.content[0].text
        if not result.is_error and done(text):
            return text
        await asyncio.sleep(0.05)
    raise AssertionError(f"get-note {path}: {text}")


async def cited_block(session, vault: Path) -> None:
    """The block after a cited note: the note's text unchanged before it, its facts, bounded."""
    day = "Cited by 1 recorded decision, on "
    note = one_text(await session.call_tool("librarian-get-note", {"path": "Notes/a.md"}))
    body, sep, block = note.partition("\n\n\u21a9 ")
    check(sep != "" and body == "# Alpha\nNotes/a.md\n\n---\n\n# Alpha\n\nThe alpha note.", note)
    lines = block.splitlines()
    check(lines[0].startswith(day) and lines[0].endswith("; the note has not changed since."), block)
    check(len(lines) == 2 and lines[1].endswith(f"\u2014 {SUMMARY}"), block)
    plain = one_text(await session.call_tool("librarian-get-note", {"path": "Notes/b.md"}))
    check("\u21a9" not in plain and plain.endswith("The beta note.\n"), f"no block when uncited: {plain}")

    # A rename keeps the content: the ledger binds it, and the block follows the note.
    (vault / "Notes/a.md").rename(vault / "Notes/alpha.md")
    note = await get_note_until(session, "Notes/alpha.md", lambda t: "\u21a9" in t)
    check(note.startswith("# Alpha\nNotes/alpha.md\n"), note)
    check(note.endswith(f"{SUMMARY} (cited as Notes/a.md)"), note)
    # Then an edit in place: the note changed since the decision cited it.
    with open(vault / "Notes/alpha.md", "a") as f:
        f.write("Decision: alpha.\n")
    note = await get_note_until(session, "Notes/alpha.md", lambda t: "Decision: alpha." in t)
    check("; the note changed since." in note, note)
    check(note.endswith(f"{SUMMARY} (cited as Notes/a.md; changed since)"), note)
    check(len(note.partition("\n\n\u21a9 ")[2]) <= 1500, "the block stays within its bound")


async def exercise(binary: str, vault: Path, env: dict) -> None:
    server_env = dict(env, LIBRARIAN_VAULT_PATH=str(vault))
    params = StdioServerParameters(command=binary, args=["mcp"], env=server_env, cwd=str(vault.parent))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.server_info.name == "rutter", f"server name: {init.server_info}")
            check(init.capabilities.tools is not None, "tools capability")
            check(init.capabilities.resources is None and init.capabilities.prompts is None,
                  "tools capability only")
            text = init.instructions or ""
            check("before reading files directly" in text, "instructions: routing paragraph")
            check("the user's work" in text, "instructions: the default label")

            tools = (await session.list_tools()).tools
            check({t.name for t in tools} == TOOLS and len(tools) == 3, f"tools: {tools}")
            for t in tools:
                check(t.input_schema.get("additionalProperties") is False, f"{t.name}: strict schema")
                check(t.annotations is not None and t.annotations.read_only_hint is True,
                      f"{t.name}: readOnlyHint")

            hit = one_text(await session.call_tool("librarian-search", {"query": "alpha"}))
            check("Notes/a.md" in hit and "prior engagement" in hit and SUMMARY in hit, hit)
            note = one_text(await session.call_tool("librarian-get-note", {"path": "Notes/a.md"}))
            check("The alpha note." in note, note)
            await cited_block(session, vault)
            miss = tool_error(await session.call_tool("librarian-get-note", {"path": "x"}))
            check(miss == "Note not found: x", miss)
            recent = one_text(await session.call_tool("librarian-recent", {"count": 5}))
            check(SUMMARY in recent, recent)

            # Invalid arguments are tool results with isError, never JSON-RPC errors.
            for tool, args, word in [
                ("librarian-recent", {"window": 0}, "window"),
                ("librarian-recent", {"detail": "full"}, "detail"),
                ("librarian-search", {"query": 3}, "query"),
                ("librarian-search", {}, "query"),
                ("librarian-get-note", {"path": "Notes/a.md", "extra": 1}, "extra"),
            ]:
                why = tool_error(await session.call_tool(tool, args))
                check(why.startswith(f"Invalid arguments for {tool}:") and word in why,
                      f"{tool} {args}: {why}")
            try:
                await session.call_tool("librarian-nothing", {})
            except MCPError as e:
                check(e.code in (-32601, -32602), f"an unknown tool gave code {e.code}")
            else:
                raise AssertionError("an unknown tool was answered as a tool")

    record_env = dict(server_env)
    params = StdioServerParameters(command=binary, args=["mcp", "--allow-record"],
                                   env=record_env, cwd=str(vault.parent))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            text = (await session.list_tools()).tools
            check("librarian-record" in {t.name for t in text}, f"tools: {text}")
            for args in [{"summary": "   "}, {}, {"summary": "x", "refs": "Notes/a.md"}]:
                why = tool_error(await session.call_tool("librarian-record", args))
                check(why.startswith("Invalid arguments for librarian-record:"), f"{args}: {why}")

    log = (vault / "_librarian/stateful-use.jsonl").read_text().splitlines()
    kinds = [json.loads(line)["kind"] for line in log]
    check(kinds.count("librarian-recent") == 1 and kinds.count("search-signal") == 1,
          f"use log: {kinds}")


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = str(Path(sys.argv[1]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        home = root / "home"
        home.mkdir()
        env = hermetic_env(home)
        try:
            vault = prepare_vault(binary, root, env)
            asyncio.run(asyncio.wait_for(exercise(binary, vault, env), timeout=120))
        except Exception as e:  # noqa: BLE001 - report any failure as one line and a status
            print(f"mcp_client: FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            return 1
    print("mcp_client: ok (Python mcp SDK: 3 tools, instructions, each tool, get-note's cited-by block, invalid arguments as isError results, librarian-record)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
