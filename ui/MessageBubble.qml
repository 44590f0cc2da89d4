import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// One message. The user's on the right as plain text; the assistant's on the left as Markdown,
// with its stats line underneath. Edit (user) and Regenerate (last answer) never delete anything:
// the new text becomes a sibling, reachable with the < 2/3 > switcher.
Item {
    id: bubble

    required property int index
    required property var messageId
    required property string role
    required property string text
    required property string status
    required property string statsLine
    required property string errorText
    required property int siblingIndex
    required property int siblingCount
    required property bool streaming
    required property bool isLast
    required property string liveText
    required property real liveFraction
    required property string reasoning
    required property real reasoningSeconds

    signal showStats(var messageId)

    readonly property bool isUser: role === "user"
    readonly property real maxBubbleWidth: Math.max(200, width * (isUser ? 0.75 : 0.9) - 32)
    property bool editing: false
    // A very long message (a big paste) is shown folded: laying out a megabyte of text would
    // hold the window for seconds. The whole text is kept, copied and edited as it is.
    readonly property int foldAt: 4000
    property bool showAll: false
    readonly property bool folded: isUser && !showAll && text.length > foldAt

    implicitHeight: box.height

    Rectangle {
        id: box
        x: bubble.isUser ? bubble.width - width - 16 : 16
        // As wide as the text needs, up to most of the view (code and tables get the full width).
        width: bubble.editing ? bubble.maxBubbleWidth
               : Math.min(bubble.maxBubbleWidth,
                          Math.max(body.naturalWidth, tools.implicitWidth,
                                   bubble.streaming ? 320 : 0,
                                   stats.visible ? stats.implicitWidth : 0, 60) + 24)
        height: content.implicitHeight + 20
        radius: Theme.radius
        color: bubble.isUser ? Theme.userBubble : Theme.assistantBubble
        border.color: Theme.bubbleBorder
        border.width: bubble.isUser ? 0 : 1

        ColumnLayout {
            id: content
            anchors.fill: parent
            anchors.margins: 10
            spacing: 6

            ReasoningSection {
                Layout.fillWidth: true
                text: bubble.reasoning
                seconds: bubble.reasoningSeconds
            }

            Column {
                id: body
                objectName: "bubble"
                property var messageId: bubble.messageId
                Layout.fillWidth: true
                visible: !bubble.editing
                spacing: 8
                // The blocks shown, one row each (code, lang, text, closed). While an answer
                // streams only the tail from the last block is split again and only changed rows
                // are announced, so the finished blocks keep their parsed documents.
                MessageSegmentModel {
                    id: segmentRows
                    markdown: !bubble.isUser
                    text: bubble.folded ? bubble.text.slice(0, bubble.foldAt) + "…"
                        : bubble.isUser || bubble.text.length > 0 ? bubble.text
                        : bubble.streaming && bubble.liveText.length === 0 ? "…" : ""
                    onResplit: body.measureAgain()
                }
                // The widest block's natural (unwrapped) width. While text streams it only grows,
                // one block reporting at a time (no binding over all blocks on every piece); it
                // is measured again over all blocks when the text is replaced and at the end.
                property real naturalWidth: 0
                function noteWidth(w) {
                    if (w > naturalWidth)
                        naturalWidth = w
                }
                function measureAgain() {
                    let w = 0
                    for (let i = 0; i < children.length; ++i)
                        if (children[i].objectName === "segment")
                            w = Math.max(w, children[i].implicitWidth)
                    naturalWidth = w
                }
                Connections {
                    target: bubble
                    function onStreamingChanged() { body.measureAgain() }
                }
                Repeater {
                    model: segmentRows
                    delegate: MessageSegment {
                        required property int index
                        required code
                        required lang
                        required text
                        required property bool closed
                        objectName: "segment"
                        width: body.width
                        markdown: !bubble.isUser
                        finished: closed || !bubble.streaming
                        onImplicitWidthChanged: body.noteWidth(implicitWidth)
                        Component.onCompleted: body.noteWidth(implicitWidth)
                    }
                }
                Button {
                    objectName: "showWholeMessage"
                    visible: bubble.folded
                    flat: true
                    text: qsTr("Show the whole message (%1 characters)").arg(bubble.text.length)
                    onClicked: bubble.showAll = true
                }
            }

            // The request's stage while it is alive: waiting, reading the prompt (with a bar and
            // an estimate), then the live speed.
            ColumnLayout {
                Layout.fillWidth: true
                visible: bubble.streaming && bubble.liveText.length > 0
                spacing: 2
                Label {
                    objectName: "liveStatus"
                    Layout.fillWidth: true
                    text: bubble.liveText
                    color: Theme.muted
                    font.pixelSize: 13
                    wrapMode: Text.Wrap
                    Accessible.role: Accessible.StatusBar
                    Accessible.name: bubble.liveText
                }
                ProgressBar {
                    Layout.fillWidth: true
                    Layout.preferredWidth: 280
                    visible: bubble.liveFraction >= 0
                    from: 0
                    to: 1
                    value: Math.max(0, bubble.liveFraction)
                    Accessible.name: qsTr("Prompt reading progress")
                }
            }

            ColumnLayout {
                visible: bubble.editing
                Layout.fillWidth: true
                TextArea {
                    id: editor
                    Layout.fillWidth: true
                    wrapMode: TextEdit.Wrap
                    Accessible.name: qsTr("Edit the message")
                }
                RowLayout {
                    Button {
                        text: qsTr("Save and ask again")
                        enabled: editor.text.trim().length > 0 && !AppController.generating
                        onClicked: {
                            bubble.editing = false
                            AppController.editMessage(bubble.messageId, editor.text)
                        }
                    }
                    Button {
                        text: qsTr("Cancel")
                        onClicked: bubble.editing = false
                    }
                }
            }

            Label {
                Layout.fillWidth: true
                visible: bubble.errorText.length > 0 || bubble.status === "stopped"
                         || bubble.status === "interrupted"
                wrapMode: Text.Wrap
                color: bubble.status === "error" ? Theme.danger : Theme.muted
                font.italic: true
                text: bubble.status === "error" ? qsTr("Error: %1").arg(bubble.errorText)
                    : bubble.status === "stopped" ? qsTr("Stopped")
                    : bubble.status === "interrupted" ? qsTr("Interrupted (Ember closed before the answer finished)")
                    : bubble.errorText
            }

            RowLayout {
                id: tools
                spacing: 2
                visible: !bubble.editing

                ToolButton {
                    visible: bubble.siblingCount > 1
                    text: "<"
                    enabled: bubble.siblingIndex > 0 && !AppController.generating
                    onClicked: AppController.switchBranch(bubble.messageId, -1)
                    Accessible.name: qsTr("Previous version")
                }
                Label {
                    visible: bubble.siblingCount > 1
                    text: (bubble.siblingIndex + 1) + "/" + bubble.siblingCount
                    color: Theme.muted
                }
                ToolButton {
                    visible: bubble.siblingCount > 1
                    text: ">"
                    enabled: bubble.siblingIndex < bubble.siblingCount - 1 && !AppController.generating
                    onClicked: AppController.switchBranch(bubble.messageId, 1)
                    Accessible.name: qsTr("Next version")
                }
                ToolButton {
                    id: copyMessage
                    property bool copied: false
                    text: copied ? qsTr("Copied") : qsTr("Copy")
                    enabled: bubble.text.length > 0
                    onClicked: {
                        AppController.copyText(bubble.text)
                        copied = true
                        copiedMessageTimer.restart()
                    }
                    Timer { id: copiedMessageTimer; interval: 1500; onTriggered: copyMessage.copied = false }
                    Accessible.name: copied ? qsTr("Copied") : qsTr("Copy the message")
                }
                ToolButton {
                    visible: bubble.isUser
                    text: qsTr("Edit")
                    enabled: !AppController.generating && AppController.modelLoaded
                    onClicked: {
                        editor.text = bubble.text
                        bubble.editing = true
                        editor.forceActiveFocus()
                    }
                    Accessible.name: qsTr("Edit and ask again")
                }
                ToolButton {
                    visible: !bubble.isUser && bubble.isLast && !bubble.streaming
                    text: qsTr("Regenerate")
                    enabled: !AppController.generating && AppController.modelLoaded
                    onClicked: AppController.regenerate()
                    Accessible.name: qsTr("Write another answer")
                }
                BusyIndicator {
                    visible: bubble.streaming
                    running: visible
                    implicitWidth: 22
                    implicitHeight: 22
                }
            }

            // Speed, prompt reuse and the device it ran on; its own line, as it is long.
            Label {
                id: stats
                objectName: "statsLine"
                Layout.fillWidth: true
                visible: bubble.statsLine.length > 0 && !bubble.editing
                text: bubble.statsLine
                wrapMode: Text.Wrap
                color: Theme.muted
                font.pixelSize: 12
                leftPadding: 6
                Accessible.name: qsTr("Answer statistics: %1").arg(bubble.statsLine)
                MouseArea {
                    anchors.fill: parent
                    cursorShape: Qt.PointingHandCursor
                    onClicked: bubble.showStats(bubble.messageId)
                }
                ToolTip.visible: statsHover.hovered
                ToolTip.text: qsTr("%1\nClick for details").arg(bubble.statsLine)
                HoverHandler { id: statsHover }
            }
        }
    }
}
