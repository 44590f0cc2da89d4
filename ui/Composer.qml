import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Where the user types. Enter sends, Shift+Enter starts a new line. Disabled, with the reason
// shown, while no model is loaded; a Stop button replaces Send while an answer is streaming.
Pane {
    id: composer
    padding: 10
    readonly property string blockReason: AppController.composerBlockReason

    function sendNow() {
        if (input.text.trim().length === 0)
            return
        if (AppController.send(input.text))
            input.clear()
    }

    background: Rectangle {
        color: Theme.window
        Rectangle { width: parent.width; height: 1; color: Theme.bubbleBorder }
    }

    Connections {
        target: AppController
        function onFocusComposer() { input.forceActiveFocus() }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        Label {
            Layout.fillWidth: true
            visible: composer.blockReason.length > 0
            text: composer.blockReason
            color: AppController.modelError.length > 0 ? Theme.danger : Theme.muted
            wrapMode: Text.Wrap
        }

        RowLayout {
            Layout.fillWidth: true
            spacing: Theme.spacing

            ScrollView {
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(Math.max(input.implicitHeight, 44), 200)
                TextArea {
                    id: input
                    objectName: "composerInput"
                    enabled: composer.blockReason.length === 0
                    wrapMode: TextEdit.Wrap
                    font.pixelSize: 15
                    placeholderText: qsTr("Message Ember (Enter sends, Shift+Enter adds a line)")
                    Accessible.name: qsTr("Message")
                    Accessible.description: composer.blockReason
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            event.accepted = true
                            if (!AppController.generating)
                                composer.sendNow()
                        }
                    }
                }
            }

            Button {
                visible: !AppController.generating
                text: qsTr("Send")
                enabled: composer.blockReason.length === 0 && input.text.trim().length > 0
                onClicked: composer.sendNow()
                Accessible.name: qsTr("Send the message")
            }
            Button {
                visible: AppController.generating
                text: qsTr("Stop")
                onClicked: AppController.stop()
                Accessible.name: qsTr("Stop the answer (Esc)")
            }
        }
    }
}
