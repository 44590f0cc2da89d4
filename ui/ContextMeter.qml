import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// How full the context will be with the chat so far and the draft, counted by the model's own
// template and tokenizer; warns before sending when older messages would be left out.
RowLayout {
    id: meter
    readonly property var usage: AppController.contextUsage
    readonly property bool known: usage.known === true
    readonly property int tokens: known ? usage.tokens : 0
    readonly property int room: known ? usage.maxPromptTokens : 0
    readonly property int context: known ? usage.contextLength : 0
    readonly property int dropped: known ? usage.droppedTurns : 0
    readonly property bool fits: !known || usage.fits
    // A remote model: the server counts the prompt; its context length as it reported it.
    readonly property bool remote: usage.remote === true
    visible: known || remote
    spacing: Theme.spacing

    ProgressBar {
        visible: meter.known
        Layout.preferredWidth: 120
        from: 0
        to: Math.max(1, meter.context)
        value: Math.min(meter.tokens, meter.context)
        Accessible.name: qsTr("Context used")
    }
    Label {
        objectName: "contextMeter"
        Layout.fillWidth: true
        font.pixelSize: 12
        wrapMode: Text.Wrap
        color: meter.dropped > 0 || !meter.fits ? Theme.danger : Theme.muted
        text: {
            if (meter.remote)
                return usage.contextLength > 0
                    ? qsTr("context %1 tokens (counted by the server)").arg(usage.contextLength.toLocaleString(Qt.locale(), 'f', 0))
                    : qsTr("context: unknown (the server does not say)")
            const used = qsTr("%1 / %2 tokens of context").arg(meter.tokens.toLocaleString(Qt.locale(), 'f', 0))
                                                          .arg(meter.context.toLocaleString(Qt.locale(), 'f', 0))
            if (!meter.fits)
                return qsTr("%1: this message is too long (room for %2 with the answer)").arg(used).arg(meter.room)
            if (meter.dropped > 0)
                return qsTr("%1: the %n oldest message(s) will be left out", "", meter.dropped).arg(used)
            return used
        }
        ToolTip.visible: meterHover.hovered
        ToolTip.text: qsTr("The chat and your draft as the model reads them. %1 tokens are left for the prompt; the rest of the context is kept for the answer.").arg(meter.room)
        HoverHandler { id: meterHover }
    }
}
