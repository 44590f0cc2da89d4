import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// A model's reasoning, folded under "Thought for N s" (or "Thinking…" while it lasts); a click
// unfolds it. Kept apart from the answer, which is shown below it as usual.
ColumnLayout {
    id: section
    property string text
    property real seconds: -1
    property bool expanded: false
    visible: text.length > 0
    spacing: 4

    ToolButton {
        objectName: "reasoningToggle"
        text: (section.expanded ? "▾ " : "▸ ")
              + (section.seconds < 0 ? qsTr("Thinking…")
                                     : qsTr("Thought for %n s", "", Math.max(1, Math.round(section.seconds))))
        font.italic: true
        onClicked: section.expanded = !section.expanded
        Accessible.name: section.expanded ? qsTr("Hide the model's reasoning")
                                          : qsTr("Show the model's reasoning")
    }
    Label {
        Layout.fillWidth: true
        visible: section.expanded
        text: section.text
        wrapMode: Text.Wrap
        textFormat: Text.PlainText
        color: Theme.muted
        leftPadding: 12
        font.pixelSize: 13
    }
}
