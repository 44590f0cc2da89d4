import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Above the chat while a model loads: "Loading <file> 37%", its bar (the file read, then the
// weights prepared) and Cancel, which goes back to the model loaded before.
Rectangle {
    id: bar
    visible: AppController.modelLoading
    color: Theme.notice
    implicitHeight: row.implicitHeight + 12

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: 6
        spacing: Theme.spacing
        Label {
            text: AppController.modelLoadText
            color: Theme.text
            elide: Text.ElideMiddle
            Layout.maximumWidth: bar.width * 0.5
        }
        ProgressBar {
            Layout.fillWidth: true
            from: 0
            to: 1
            value: AppController.modelLoadFraction
            Accessible.name: AppController.modelLoadText
        }
        Button {
            text: qsTr("Cancel")
            onClicked: AppController.cancelModelLoad()
            Accessible.name: qsTr("Cancel loading the model")
        }
    }
}
