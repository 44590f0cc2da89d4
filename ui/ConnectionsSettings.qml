import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Settings → Connections: remote OpenAI-compatible servers (vLLM, llama.cpp's server, another
// Ember). The key goes to the system keyring, or to a file only the user can read where no
// keyring runs; each row says which. "Test" lists the server's models and the round trip.
ColumnLayout {
    id: root
    spacing: 8
    property alias connections: connectionsModel

    ConnectionsModel { id: connectionsModel }

    Label { text: qsTr("Connections"); font.pixelSize: 17; font.bold: true; topPadding: 12 }
    Label {
        Layout.fillWidth: true
        Layout.rightMargin: 24
        wrapMode: Text.Wrap
        color: Theme.muted
        text: qsTr("Servers that speak the OpenAI API: vLLM, llama.cpp's server, another Ember.")
    }

    Repeater {
        model: connectionsModel
        delegate: Rectangle {
            id: row
            required property int index
            required property string name
            required property string baseUrl
            required property string keyStorage
            required property bool testing
            required property bool reachable
            required property string status
            required property var models
            Layout.fillWidth: true
            Layout.rightMargin: 24
            implicitHeight: rowColumn.implicitHeight + 16
            radius: Theme.radius
            color: Theme.base
            border.color: Theme.bubbleBorder

            ColumnLayout {
                id: rowColumn
                anchors.fill: parent
                anchors.margins: 8
                spacing: 4
                Label { text: row.name; font.bold: true; elide: Text.ElideRight; Layout.fillWidth: true }
                Label { text: row.baseUrl; color: Theme.muted; elide: Text.ElideMiddle; Layout.fillWidth: true }
                Label { text: qsTr("Key: %1").arg(row.keyStorage); color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
                Label {
                    Layout.fillWidth: true
                    wrapMode: Text.Wrap
                    text: row.status + (row.models.length > 0 ? "\n" + row.models.join(", ") : "")
                    color: row.reachable || row.testing ? Theme.text : Theme.danger
                    Accessible.name: qsTr("Connection status")
                }
                RowLayout {
                    Button {
                        text: row.testing ? qsTr("Testing…") : qsTr("Test connection")
                        enabled: !row.testing
                        onClicked: connectionsModel.test(row.index)
                    }
                    Button { text: qsTr("Remove"); onClicked: connectionsModel.remove(row.index) }
                }
            }
        }
    }

    Label { text: qsTr("Add a server"); font.bold: true; topPadding: 6 }
    TextField {
        id: nameField
        Layout.fillWidth: true
        Layout.rightMargin: 24
        placeholderText: qsTr("Name (e.g. team GPU server)")
        Accessible.name: qsTr("Server name")
    }
    TextField {
        id: urlField
        Layout.fillWidth: true
        Layout.rightMargin: 24
        placeholderText: qsTr("http://192.168.1.20:8000/v1")
        inputMethodHints: Qt.ImhUrlCharactersOnly
        Accessible.name: qsTr("Server address")
    }
    TextField {
        id: keyField
        Layout.fillWidth: true
        Layout.rightMargin: 24
        placeholderText: qsTr("API key (optional)")
        echoMode: TextInput.Password
        Accessible.name: qsTr("API key")
    }
    Label {
        id: formError
        Layout.fillWidth: true
        Layout.rightMargin: 24
        visible: text.length > 0
        wrapMode: Text.Wrap
        color: Theme.danger
    }
    Button {
        text: qsTr("Add")
        enabled: urlField.text.length > 0
        onClicked: {
            formError.text = connectionsModel.add(nameField.text, urlField.text, keyField.text)
            if (formError.text.length === 0) {
                const row = connectionsModel.count - 1
                nameField.text = ""; urlField.text = ""; keyField.text = ""
                connectionsModel.test(row)
            }
        }
    }
}
