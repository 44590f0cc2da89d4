import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// The sidebar: New chat, a search box over every message, and the conversations, newest first.
Rectangle {
    id: sidebar
    color: Theme.sidebar

    function focusSearch() { searchField.forceActiveFocus(); searchField.selectAll() }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.spacing

        Button {
            Layout.fillWidth: true
            text: qsTr("New chat")
            onClicked: AppController.newConversation()
            Accessible.name: qsTr("New chat (Ctrl+N)")
        }

        TextField {
            id: searchField
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search all chats (Ctrl+F)")
            onTextChanged: AppController.search(text)
            Keys.onEscapePressed: clear()
            Accessible.name: qsTr("Search all chats")
        }

        ListView {
            id: results
            visible: searchField.text.length > 0
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: AppController.searchResults
            Accessible.name: qsTr("Search results")
            delegate: ItemDelegate {
                required property var conversationId
                required property var messageId
                required property string title
                required property string snippet
                width: ListView.view.width
                contentItem: Column {
                    spacing: 2
                    Label { text: title; font.bold: true; elide: Text.ElideRight; width: parent.width }
                    Label {
                        text: snippet
                        textFormat: Text.StyledText
                        wrapMode: Text.Wrap
                        maximumLineCount: 3
                        elide: Text.ElideRight
                        width: parent.width
                        color: Theme.muted
                    }
                }
                onClicked: AppController.openSearchHit(conversationId, messageId)
                Accessible.name: title
            }
            Label {
                anchors.centerIn: parent
                visible: results.count === 0
                text: qsTr("No matches")
                color: Theme.muted
            }
        }

        ListView {
            id: conversations
            visible: searchField.text.length === 0
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            model: AppController.conversations
            Accessible.name: qsTr("Conversations")
            delegate: ItemDelegate {
                id: row
                required property var conversationId
                required property string title
                required property string updated
                required property bool generating
                width: ListView.view.width
                highlighted: conversationId === AppController.currentConversationId
                onClicked: AppController.openConversation(conversationId)
                Accessible.name: generating ? qsTr("%1 (answering)").arg(title) : title
                contentItem: RowLayout {
                    // Marks a conversation whose answer is streaming, shown or not.
                    BusyIndicator {
                        objectName: "generatingMark"
                        visible: row.generating
                        running: visible
                        implicitWidth: 18
                        implicitHeight: 18
                        padding: 0
                    }
                    Column {
                        Layout.fillWidth: true
                        Label {
                            text: row.title
                            elide: Text.ElideRight
                            width: parent.width
                            font.bold: row.highlighted
                            color: row.highlighted ? row.palette.highlightedText : Theme.text
                        }
                        Label {
                            text: row.generating ? qsTr("answering…") : row.updated
                            font.pixelSize: 11
                            font.italic: row.generating
                            color: row.highlighted ? row.palette.highlightedText
                                 : row.generating ? Theme.accent : Theme.muted
                        }
                    }
                    ToolButton {
                        text: "⋯"
                        onClicked: menu.popup()
                        Accessible.name: qsTr("Rename or delete %1").arg(row.title)
                        Menu {
                            id: menu
                            MenuItem {
                                text: qsTr("Rename…")
                                onTriggered: renameDialog.ask(row.conversationId, row.title)
                            }
                            MenuItem {
                                text: qsTr("Delete…")
                                onTriggered: deleteDialog.ask(row.conversationId, row.title)
                            }
                        }
                    }
                }
            }
        }
    }

    Dialog {
        id: renameDialog
        property var conversationId: 0
        function ask(id, title) { conversationId = id; nameField.text = title; open(); nameField.forceActiveFocus() }
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Rename chat")
        standardButtons: Dialog.Ok | Dialog.Cancel
        TextField {
            id: nameField
            width: 320
            Accessible.name: qsTr("Chat name")
            onAccepted: renameDialog.accept()
        }
        onAccepted: AppController.renameConversation(conversationId, nameField.text)
    }

    Dialog {
        id: deleteDialog
        property var conversationId: 0
        property string name
        function ask(id, title) { conversationId = id; name = title; open() }
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("Delete chat?")
        standardButtons: Dialog.Yes | Dialog.No
        Label { text: qsTr("“%1” and all its messages will be deleted.").arg(deleteDialog.name) }
        onAccepted: AppController.deleteConversation(conversationId)
    }
}
