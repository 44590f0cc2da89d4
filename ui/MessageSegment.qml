import QtQuick
import QtQuick.Controls
import Ember

// One part of a message: prose (Markdown for answers, plain text for the user's own words) or a
// fenced code block in a monospace box with its own copy button.
Item {
    id: segment
    property bool code: false
    property string lang
    property string text
    property bool markdown: true
    // The code coloured by language (GNU source-highlight), or "" to show it plain.
    readonly property string highlighted: code ? CodeHighlighter.toHtml(text, lang, Theme.dark) : ""

    implicitWidth: code ? codeText.implicitWidth + 20 : prose.implicitWidth
    implicitHeight: code ? codeBox.height : prose.implicitHeight

    TextEdit {
        id: prose
        objectName: "bubbleText"
        visible: !segment.code
        width: segment.width
        readOnly: true
        selectByMouse: true
        wrapMode: TextEdit.Wrap
        textFormat: segment.markdown ? TextEdit.MarkdownText : TextEdit.PlainText
        text: segment.code ? "" : segment.text
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

    Rectangle {
        id: codeBox
        visible: segment.code
        width: segment.width
        height: codeText.implicitHeight + langLabel.height + 14
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
            visible: segment.code
            x: 10
            y: langLabel.height + 8
            width: parent.width - 20
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.WrapAtWordBoundaryOrAnywhere
            textFormat: segment.highlighted.length > 0 ? TextEdit.RichText : TextEdit.PlainText
            text: segment.code ? (segment.highlighted.length > 0 ? segment.highlighted : segment.text) : ""
            color: Theme.text
            selectionColor: Theme.accent
            font.family: Theme.monoFamily
            font.pixelSize: 14
            Accessible.role: Accessible.StaticText
            Accessible.name: qsTr("Code: %1").arg(segment.text)
        }
    }
}
