import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Settings section "Local API server": serves this app's engine to other programs through the
// OpenAI API (their requests share the engine and its prefix cache with the chats).
ColumnLayout {
    id: section
    spacing: 6

    Label { text: qsTr("Local API server"); font.pixelSize: 17; font.bold: true; topPadding: 12 }

    Switch {
        id: toggle
        text: qsTr("Serve this model on this computer")
        enabled: LocalApiServer.available
        checked: LocalApiServer.enabled
        onToggled: LocalApiServer.enabled = checked
        Accessible.name: qsTr("Local API server on or off")
    }

    RowLayout {
        Label { text: qsTr("Port") }
        TextField {
            id: portField
            Layout.preferredWidth: 90
            text: String(LocalApiServer.port)
            validator: IntValidator { bottom: 1; top: 65535 }
            onEditingFinished: LocalApiServer.port = parseInt(text)
            Accessible.name: qsTr("Local API server port")
        }
    }

    Label { text: qsTr("API key"); font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: keyField
            Layout.fillWidth: true
            text: LocalApiServer.apiKey
            placeholderText: qsTr("none: any program on this computer may use it")
            echoMode: reveal.checked ? TextInput.Normal : TextInput.Password
            onEditingFinished: LocalApiServer.apiKey = text
            Accessible.name: qsTr("Local API server key")
        }
        Button {
            id: reveal
            text: checked ? qsTr("Hide") : qsTr("Show")
            checkable: true
            Accessible.name: qsTr("Show or hide the key")
        }
        Button {
            text: qsTr("New key")
            onClicked: LocalApiServer.generateKey()
            Accessible.name: qsTr("Generate a new API key")
        }
    }

    Label {
        Layout.fillWidth: true
        visible: LocalApiServer.keyStorage.length > 0
        text: LocalApiServer.keyStorage
        textFormat: Text.PlainText
        wrapMode: Text.Wrap
        opacity: 0.7
    }
    Label {
        Layout.fillWidth: true
        visible: LocalApiServer.address.length > 0
        text: qsTr("Base URL: %1").arg(LocalApiServer.address)
        textFormat: Text.PlainText
        wrapMode: Text.WrapAnywhere
    }
    Label {
        Layout.fillWidth: true
        visible: LocalApiServer.error.length > 0
        text: LocalApiServer.error
        color: Theme.danger
        wrapMode: Text.Wrap
    }
}
