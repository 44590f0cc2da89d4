.pragma library

// Splits an answer into prose and fenced code blocks (``` or ~~~), so that code gets its own
// monospace box with a copy button. An unclosed fence (still streaming) runs to the end.
function split(text) {
    const parts = []
    const lines = text.split("\n")
    let prose = []
    let code = null
    let fence = ""
    function flushProse() {
        if (prose.length > 0 && prose.join("").trim().length > 0)
            parts.push({ code: false, lang: "", text: prose.join("\n") })
        prose = []
    }
    for (const line of lines) {
        const trimmed = line.trim()
        if (code === null) {
            const open = trimmed.match(/^(```+|~~~+)\s*([\w+#.-]*)/)
            if (open) {
                flushProse()
                fence = open[1]
                code = { code: true, lang: open[2] || "", lines: [] }
            } else {
                prose.push(line)
            }
        } else if (trimmed.startsWith(fence) && trimmed.replace(/[`~]/g, "").length === 0) {
            parts.push({ code: true, lang: code.lang, text: code.lines.join("\n") })
            code = null
        } else {
            code.lines.push(line)
        }
    }
    if (code !== null)
        parts.push({ code: true, lang: code.lang, text: code.lines.join("\n") })
    flushProse()
    return parts
}
