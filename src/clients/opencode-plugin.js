import { spawn } from "node:child_process"

// The capture command; git-rutter reads the turn this plugin hands it on stdin.
const COMMAND = ["/ABSOLUTE/PATH/TO/git-rutter", "capture", "--client", "opencode"]

// How long a capture may run before it is stopped (it takes milliseconds).
const LIMIT_MS = 60000

// Records the directive lines of each turn. OpenCode has no hook command of its own: this plugin
// follows the documented events (message.updated, message.part.updated, session.idle) and, when
// a session goes idle, hands the text of the assistant's messages since the last prompt to the
// capture command above as {hook_event_name, session_id, cwd, last_assistant_message}.
// Subagent sessions (those with a parentID) are skipped. It never throws into OpenCode, never
// prints, and never waits for the capture.
export const GitRutter = async ({ directory }) => {
  const roles = new Map() // messageID -> "user" | "assistant"
  const turns = new Map() // sessionID -> { parts: Map(partID -> { messageID, text }), cwd }
  const children = new Set() // subagent sessions

  const turn = (id) => {
    if (!turns.has(id)) turns.set(id, { parts: new Map(), cwd: undefined })
    return turns.get(id)
  }

  const capture = (sessionID) => {
    const t = turns.get(sessionID)
    turns.delete(sessionID)
    if (!sessionID || !t || children.has(sessionID)) return
    const parts = [...t.parts.values()].filter((p) => roles.get(p.messageID) === "assistant")
    for (const p of t.parts.values()) roles.delete(p.messageID)
    const payload = JSON.stringify({
      hook_event_name: "session.idle",
      session_id: sessionID,
      cwd: t.cwd || directory,
      last_assistant_message: parts.map((p) => p.text).join("\n"),
    })
    const child = spawn(COMMAND[0], COMMAND.slice(1), { stdio: ["pipe", "ignore", "ignore"] })
    const timer = setTimeout(() => child.kill(), LIMIT_MS)
    child.on("error", () => clearTimeout(timer))
    child.on("exit", () => clearTimeout(timer))
    child.stdin.on("error", () => {})
    child.stdin.end(payload)
  }

  const seen = (event) => {
    const p = event.properties || {}
    switch (event.type) {
      case "session.created":
      case "session.updated":
        if (p.info && p.info.parentID) children.add(p.info.id)
        return
      case "message.updated": {
        const info = p.info
        if (!info || !info.id || !info.sessionID) return
        if (info.role === "user" && roles.get(info.id) !== "user") turns.delete(info.sessionID)
        roles.set(info.id, info.role)
        if (info.role === "assistant" && info.path && info.path.cwd) turn(info.sessionID).cwd = info.path.cwd
        return
      }
      case "message.part.updated": {
        const part = p.part
        if (!part || part.type !== "text" || part.synthetic || part.ignored) return
        if (typeof part.text !== "string" || !part.sessionID) return
        turn(part.sessionID).parts.set(part.id, { messageID: part.messageID, text: part.text })
        return
      }
      case "session.idle":
        capture(p.sessionID)
        return
      case "session.status":
        // Newer OpenCode reports idleness here too; a turn is handed over once either way.
        if (p.status && p.status.type === "idle") capture(p.sessionID)
        return
    }
  }

  return {
    event: async ({ event }) => {
      try {
        seen(event)
      } catch {
        // A capture problem must never break the session; the hook-run log shows runs.
      }
    },
  }
}
