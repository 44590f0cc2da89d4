.pragma library

// Splits an answer into prose blocks and fenced code blocks (``` or ~~~), so that code gets its
// own monospace box with a copy button, and so that a streaming answer is parsed again only from
// its last block. An unclosed fence (still streaming) runs to the end. Prose is cut into blocks
// where Markdown itself always starts a new block: after a blank line when the next line is not
// indented (an indented one may continue a list item), and before an ATX heading. Each part
// records where it starts in the text, so that a growing answer is split again only from its
// last part (splitFrom): the earlier parts are finished and keep their text.
function split(text) {
    const parts = []
    const lines = text.split("\n")
    let prose = []
    let proseStart = 0
    let code = null
    let fence = ""
    let offset = 0
    let afterBlank = false  // the prose so far ends with a blank line
    function flushProse() {
        if (prose.length > 0 && prose.join("").trim().length > 0)
            parts.push({ code: false, lang: "", text: prose.join("\n"), start: proseStart })
        prose = []
    }
    for (let i = 0; i < lines.length; ++i) {
        const line = lines[i]
        // The last line may still grow (streaming): what is decided on it must stay true
        // whatever follows ("#" may become "#x", not a heading; "# " stays one).
        const complete = i < lines.length - 1
        const trimmed = line.trim()
        if (code === null) {
            const open = trimmed.match(/^(```+|~~~+)\s*([\w+#.-]*)/)
            if (open) {
                flushProse()
                fence = open[1]
                code = { code: true, lang: open[2] || "", lines: [], start: offset }
            } else {
                const blank = trimmed.length === 0
                const startsBlock = !blank && ((afterBlank && !/^\s/.test(line))
                                               || (complete ? /^#{1,6}(\s|$)/ : /^#{1,6}\s/).test(line))
                if (startsBlock && prose.length > 0 && prose.join("").trim().length > 0)
                    flushProse()
                if (prose.length === 0)
                    proseStart = offset
                prose.push(line)
                afterBlank = blank
            }
        } else if (trimmed.startsWith(fence) && trimmed.replace(/[`~]/g, "").length === 0) {
            parts.push({ code: true, lang: code.lang, text: code.lines.join("\n"), start: code.start })
            code = null
            afterBlank = false
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
// The result's `kept` says how many leading parts are the previous ones, unchanged (0 after a
// full split): a view updates only the parts from there on.
function splitFrom(previous, text) {
    if (!previous || !previous.parts || previous.parts.length === 0
            || !text.startsWith(previous.text)) {
        const parts = split(text)
        parts.kept = 0
        return parts
    }
    const last = previous.parts[previous.parts.length - 1]
    const tail = split(text.slice(last.start))
    for (const part of tail)
        part.start += last.start
    const parts = previous.parts.slice(0, -1).concat(tail)
    parts.kept = previous.parts.length - 1
    return parts
}
