import QtQuick
import QtQuick.Controls
import Ember

// One block of a message: prose (Markdown for answers, plain text for the user's own words) or a
// fenced code block in a monospace box with its own copy button. Only the kind the block is gets
// built. A code block is coloured (GNU source-highlight) once it is finished: while its fence is
// still open in a streaming answer it grows as plain text, so a piece costs a plain re-layout of
// that block, not a new highlight and HTML parse.
Loader {
    id: segment
    property bool code: false
    property string lang
    property string text
    property bool markdown: true
    // No more text can change the block (its fence closed, or the answer ended).
    property bool finished: true

    sourceComponent: code ? codeBlock : proseBlock

    Component {
        id: proseBlock
        TextEdit {
            id: prose
            objectName: "bubbleText"
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            textFormat: segment.markdown ? TextEdit.MarkdownText : TextEdit.PlainText
            text: segment.text
            color: Theme.text
            selectionColor: Theme.accent
            font.pixelSize: 15
            Accessible.role: Accessible.StaticText
            Accessible.name: segment.text
            // Links open in the system browser; the pointer shows they can be clicked.
            onLinkActivated: (link) => Qt.openUrlExternally(link)
            HoverHandler {
                cursorShape: prose.hoveredLink.length > 0 ? Qt.PointingHandCursor : Qt.IBeamCursor
            }
        }
    }

    Component {
        id: codeBlock
        Rectangle {
            id: codeBox
            // The code coloured by language, or "" to show it plain (open, or a language
            // source-highlight does not know).
            readonly property string highlighted:
                segment.finished ? CodeHighlighter.toHtml(segment.text, segment.lang, Theme.dark) : ""
            implicitWidth: codeText.implicitWidth + 20
            implicitHeight: codeText.implicitHeight + langLabel.height + 14
            radius: 6
            color: Theme.codeBackground
            border.color: Theme.bubbleBorder

            Label {
                id: langLabel
                x: 10
                y: 4
                text: segment.lang.length > 0 ? segment.lang : qsTr("code")
                color: Theme.muted
                font.pixelSize: 11
            }
            ToolButton {
                id: copyButton
                property bool copied: false
                anchors.right: parent.right
                anchors.top: parent.top
                height: 22
                text: copied ? qsTr("Copied") : qsTr("Copy")
                font.pixelSize: 11
                onClicked: {
                    AppController.copyText(segment.text)
                    copied = true
                    copiedTimer.restart()
                }
                Timer { id: copiedTimer; interval: 1500; onTriggered: copyButton.copied = false }
                Accessible.name: copied ? qsTr("Copied") : qsTr("Copy the code")
            }
            TextEdit {
                id: codeText
                objectName: "codeText"
                x: 10
                y: langLabel.height + 8
                width: parent.width - 20
                readOnly: true
                selectByMouse: true
                wrapMode: TextEdit.WrapAtWordBoundaryOrAnywhere
                textFormat: codeBox.highlighted.length > 0 ? TextEdit.RichText : TextEdit.PlainText
                text: codeBox.highlighted.length > 0 ? codeBox.highlighted : segment.text
                color: Theme.text
                selectionColor: Theme.accent
                font.family: Theme.monoFamily
                font.pixelSize: 14
                Accessible.role: Accessible.StaticText
                Accessible.name: qsTr("Code: %1").arg(segment.text)
            }
        }
    }
}
