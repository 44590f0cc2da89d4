import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Where the chat goes while the chat database opens (on a slow disk, or while an older one is
// updated, that can take a while): what is being done, how far, and that typing is fine; or, when
// it could not be opened, why, and a button to try again. The rest of the window works meanwhile.
Pane {
    id: pane
    objectName: "storeOpeningPane"
    readonly property bool failed: AppController.storeError.length > 0
    background: Rectangle { color: Theme.window }

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(pane.availableWidth, 460)
        spacing: Theme.spacing

        BusyIndicator {
            Layout.alignment: Qt.AlignHCenter
            running: AppController.storeOpening
            visible: running
        }
        Label {
            objectName: "storeOpeningTitle"
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            font.pixelSize: 18
            text: pane.failed ? qsTr("Your chats could not be opened") : qsTr("Opening your chats…")
            color: pane.failed ? Theme.danger : Theme.text
            wrapMode: Text.Wrap
        }
        Label {
            objectName: "storeOpeningDetail"
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            text: pane.failed ? AppController.storeError : AppController.storeOpeningText
            color: Theme.muted
            wrapMode: Text.Wrap
        }
        ProgressBar {
            Layout.fillWidth: true
            visible: AppController.storeOpening && AppController.storeOpeningFraction > 0
            value: AppController.storeOpeningFraction
            Accessible.name: qsTr("How far the chats have been opened")
        }
        Label {
            Layout.fillWidth: true
            horizontalAlignment: Text.AlignHCenter
            visible: AppController.storeOpening
            text: qsTr("You can type meanwhile: a message is sent once your chats are open.")
            color: Theme.muted
            wrapMode: Text.Wrap
        }
        Button {
            objectName: "retryOpenStore"
            Layout.alignment: Qt.AlignHCenter
            visible: pane.failed
            text: qsTr("Try again")
            onClicked: AppController.retryOpenStore()
            Accessible.name: qsTr("Try to open the chats again")
        }
    }
}
