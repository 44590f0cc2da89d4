import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// One numeric/text setting: validated as typed by the engine's own checks, saved when valid.
ColumnLayout {
    id: field
    required property string key
    required property string label
    property string hint
    property string error
    spacing: 2

    function reset() {
        const value = AppController.settings[key]
        input.text = value === undefined ? "" : String(value)
        error = ""
    }
    Component.onCompleted: reset()
    Connections {
        target: AppController
        function onCurrentConversationChanged() { field.reset() }
    }

    Label { text: field.label; font.bold: true }
    TextField {
        id: input
        Layout.fillWidth: true
        Accessible.name: field.label
        Accessible.description: field.error.length > 0 ? field.error : field.hint
        onTextEdited: {
            field.error = AppController.settingError(field.key, text)
            if (field.error.length === 0)
                AppController.setSetting(field.key, text)
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text.length > 0
        text: field.error.length > 0 ? field.error : field.hint
        color: field.error.length > 0 ? Theme.danger : Theme.muted
        wrapMode: Text.Wrap
        font.pixelSize: 12
    }
}
