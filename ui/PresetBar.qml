import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Presets: the system prompt with the settings above, saved by name; applied to this chat, or
// made what every new chat starts with.
ColumnLayout {
    id: bar
    spacing: 4

    Label { text: qsTr("Presets"); font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        ComboBox {
            id: choice
            Layout.fillWidth: true
            model: AppController.presetNames
            displayText: count === 0 ? qsTr("No presets yet") : currentText
            enabled: count > 0
            Accessible.name: qsTr("Preset")
        }
        Button {
            text: qsTr("Apply")
            enabled: choice.count > 0
            onClicked: AppController.applyPreset(choice.currentText)
            Accessible.name: qsTr("Apply the preset to this chat")
        }
    }
    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: newName
            Layout.fillWidth: true
            placeholderText: qsTr("Name for these settings")
            Accessible.name: qsTr("Preset name")
            onAccepted: saveButton.clicked()
        }
        Button {
            id: saveButton
            text: qsTr("Save")
            enabled: newName.text.trim().length > 0
            onClicked: {
                if (AppController.savePreset(newName.text)) {
                    choice.currentIndex = AppController.presetNames.indexOf(newName.text.trim())
                    newName.clear()
                }
            }
            Accessible.name: qsTr("Save the system prompt and settings as a preset")
        }
    }
    CheckBox {
        enabled: choice.count > 0
        text: qsTr("New chats start with this preset")
        checked: choice.count > 0 && AppController.defaultPreset === choice.currentText
        onToggled: AppController.setDefaultPreset(checked ? choice.currentText : "")
    }
    Label {
        Layout.fillWidth: true
        visible: AppController.defaultPreset.length > 0
        text: qsTr("Default for new chats: %1").arg(AppController.defaultPreset)
        color: Theme.muted
        font.pixelSize: 12
        wrapMode: Text.Wrap
    }
}
