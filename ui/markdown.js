.pragma library

// Splits an answer into prose and fenced code blocks (``` or ~~~), so that code gets its own
// monospace box with a copy button. An unclosed fence (still streaming) runs to the end. Each
// part records where it starts in the text, so that a growing answer is split again only from
// its last part (splitFrom): the earlier parts are finished and keep their text.
function split(text) {
    const parts = []
    const lines = text.split("\n")
    let prose = []
    let proseStart = 0
    let code = null
    let fence = ""
    let offset = 0
    function flushProse() {
        if (prose.length > 0 && prose.join("").trim().length > 0)
            parts.push({ code: false, lang: "", text: prose.join("\n"), start: proseStart })
        prose = []
    }
    for (const line of lines) {
        const trimmed = line.trim()
        if (code === null) {
            const open = trimmed.match(/^(```+|~~~+)\s*([\w+#.-]*)/)
            if (open) {
                flushProse()
                fence = open[1]
                code = { code: true, lang: open[2] || "", lines: [], start: offset }
            } else {
                if (prose.length === 0)
                    proseStart = offset
                prose.push(line)
            }
        } else if (trimmed.startsWith(fence) && trimmed.replace(/[`~]/g, "").length === 0) {
            parts.push({ code: true, lang: code.lang, text: code.lines.join("\n"), start: code.start })
            code = null
        } else {
            code.lines.push(line)
        }
        offset += line.length + 1
    }
    if (code !== null)
        parts.push({ code: true, lang: code.lang, text: code.lines.join("\n"), start: code.start })
    flushProse()
    return parts
}

// The parts of `text` given the parts of an earlier `previous.text` that it extends: only the
// tail from the last part's start is split again (streaming). Anything else: a full split.
function splitFrom(previous, text) {
    if (!previous || !previous.parts || previous.parts.length === 0
            || !text.startsWith(previous.text))
        return split(text)
    const last = previous.parts[previous.parts.length - 1]
    const tail = split(text.slice(last.start))
    for (const part of tail)
        part.start += last.start
    return previous.parts.slice(0, -1).concat(tail)
}
