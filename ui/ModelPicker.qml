import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs
import Ember

// The model in use, a menu of the GGUF files found (with whether each fits in the free memory
// for the current context, answers at once and compute device), the models of the servers in
// Settings → Connections (marked with their server; a line while a server is asked, or why it did
// not answer), "Open file...",
// and the reader's message when a file cannot be used. While a model loads, its percentage and
// Cancel are in the load bar above the chat (ModelLoadBar), the one progress display.
RowLayout {
    id: picker
    spacing: Theme.spacing

    function openList() {
        AppController.rescanModels()
        list.open()
    }

    Button {
        id: button
        text: AppController.modelName.length > 0 ? AppController.modelName : qsTr("Choose a model")
        onClicked: picker.openList()
        Accessible.name: qsTr("Model: %1").arg(text)
    }
    Label {
        Layout.fillWidth: true
        elide: Text.ElideRight
        text: AppController.modelError.length > 0 ? AppController.modelError
            : AppController.modelLoading ? qsTr("Loading…") : AppController.modelDetails
        color: AppController.modelError.length > 0 ? Theme.danger : Theme.muted
        ToolTip.visible: errorHover.hovered && AppController.modelError.length > 0
        ToolTip.text: AppController.modelError
        HoverHandler { id: errorHover }
    }

    Popup {
        id: list
        y: button.height + 4
        width: 560
        height: Math.min(420, models.contentHeight + serverLines.height + 20)
        padding: 6
        Column {  // "asking <server>…", or why a server did not answer
            id: serverLines
            width: parent.width
            Repeater {
                model: AppController.remoteServerLines
                Label {
                    required property string modelData
                    objectName: "remoteServerLine"
                    width: serverLines.width
                    leftPadding: 12
                    text: modelData
                    wrapMode: Text.Wrap
                    color: Theme.muted
                    font.pixelSize: 12
                }
            }
        }
        ListView {
            id: models
            anchors.fill: parent
            anchors.topMargin: serverLines.height
            clip: true
            model: AppController.models
            delegate: ItemDelegate {
                required property string path
                required property string fileName
                required property string summary
                required property string errorText
                required property bool isOpenFile
                required property string fitText
                required property bool fits
                required property bool isRemote
                required property string server
                required property int index
                width: ListView.view.width
                enabled: isOpenFile || errorText.length === 0
                contentItem: Column {
                    Label { text: fileName; font.bold: true }
                    Label {
                        visible: summary.length > 0
                        text: summary
                        width: parent.width
                        wrapMode: Text.Wrap
                        color: errorText.length > 0 ? Theme.danger : Theme.muted
                        font.pixelSize: 12
                    }
                    Label {  // "fits: needs ... of ... free in ...", or why it would not
                        visible: fitText.length > 0
                        text: fitText
                        width: parent.width
                        wrapMode: Text.Wrap
                        color: fits ? Theme.muted : Theme.danger
                        font.pixelSize: 12
                    }
                }
                onClicked: {
                    list.close()
                    if (isOpenFile)
                        fileDialog.open()
                    else if (isRemote)
                        AppController.useRemoteModel(index)
                    else
                        AppController.loadModel(path)
                }
                Accessible.name: isRemote ? qsTr("%1 on %2").arg(fileName).arg(server) : fileName
            }
        }
    }

    FileDialog {
        id: fileDialog
        title: qsTr("Open a GGUF model")
        nameFilters: [qsTr("GGUF models (*.gguf)"), qsTr("All files (*)")]
        onAccepted: AppController.loadModelUrl(selectedFile)
    }
}
