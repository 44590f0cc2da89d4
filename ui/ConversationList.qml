import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtQuick.Dialogs
import Ember

// The sidebar: New chat, a search box over every message, and the conversations, pinned first,
// then newest first. Rename happens in place; Delete takes effect at once, with an Undo bar at
// the bottom for a few seconds.
Rectangle {
    id: sidebar
    color: Theme.sidebar

    function focusSearch() { searchField.forceActiveFocus(); searchField.selectAll() }
    // An export or import runs on the store's thread; one at a time.
    readonly property bool transferBusy: AppController.exporting || AppController.importing

    Connections {
        target: AppController
        function onExportFinished(path, error) { if (error.length > 0) errorDialog.show(error) }
        function onImportFinished(conversations, error) { if (error.length > 0) errorDialog.show(error) }
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: Theme.spacing
        spacing: Theme.spacing

        RowLayout {
            Layout.fillWidth: true
            Button {
                Layout.fillWidth: true
                text: qsTr("New chat")
                onClicked: AppController.newConversation()
                Accessible.name: qsTr("New chat (Ctrl+N)")
            }
            ToolButton {
                text: "⋯"
                onClicked: allMenu.popup()
                Accessible.name: qsTr("Export or import chats")
                Menu {
                    id: allMenu
                    MenuItem {
                        text: qsTr("Export all chats as Markdown…")
                        enabled: !sidebar.transferBusy
                        onTriggered: exportDialog.ask(0, "md")
                    }
                    MenuItem {
                        text: qsTr("Export all chats as JSON…")
                        enabled: !sidebar.transferBusy
                        onTriggered: exportDialog.ask(0, "json")
                    }
                    MenuItem {
                        text: qsTr("Import chats from JSON…")
                        enabled: !sidebar.transferBusy
                        onTriggered: importDialog.open()
                    }
                }
            }
        }

        // "Exporting to <file>…" while it runs; the outcome comes as the notice (or the error).
        RowLayout {
            objectName: "transferBusy"
            Layout.fillWidth: true
            visible: sidebar.transferBusy
            BusyIndicator {
                running: parent.visible
                implicitWidth: 18
                implicitHeight: 18
                padding: 0
            }
            Label {
                Layout.fillWidth: true
                text: AppController.transferText
                elide: Text.ElideMiddle
                color: Theme.text
                Accessible.name: text
            }
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
                required property bool pinned
                property bool renaming: false
                function startRename() {
                    renaming = true
                    nameEditor.text = title
                    nameEditor.selectAll()
                    nameEditor.forceActiveFocus()
                }
                function finishRename(save) {
                    if (!renaming)
                        return
                    renaming = false
                    if (save)
                        AppController.renameConversation(conversationId, nameEditor.text)
                }
                width: ListView.view.width
                highlighted: conversationId === AppController.currentConversationId
                onClicked: if (!renaming) AppController.openConversation(conversationId)
                onDoubleClicked: startRename()
                TapHandler {
                    acceptedButtons: Qt.RightButton
                    onTapped: menu.popup()
                }
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
                        TextField {
                            id: nameEditor
                            visible: row.renaming
                            width: parent.width
                            Accessible.name: qsTr("Chat name")
                            onAccepted: row.finishRename(true)
                            Keys.onEscapePressed: row.finishRename(false)
                            onActiveFocusChanged: if (!activeFocus) row.finishRename(true)
                        }
                        Label {
                            visible: !row.renaming
                            text: (row.pinned ? "★ " : "") + row.title
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
                        Accessible.name: qsTr("Actions for %1").arg(row.title)
                        Menu {
                            id: menu
                            MenuItem {
                                text: row.pinned ? qsTr("Unpin") : qsTr("Pin to top")
                                onTriggered: AppController.setPinned(row.conversationId, !row.pinned)
                            }
                            MenuItem {
                                text: qsTr("Rename")
                                onTriggered: row.startRename()
                            }
                            MenuItem {
                                text: qsTr("Export as Markdown…")
                                enabled: !sidebar.transferBusy
                                onTriggered: exportDialog.ask(row.conversationId, "md")
                            }
                            MenuItem {
                                text: qsTr("Export as JSON (every version, with stats)…")
                                enabled: !sidebar.transferBusy
                                onTriggered: exportDialog.ask(row.conversationId, "json")
                            }
                            MenuItem {
                                text: qsTr("Delete")
                                onTriggered: AppController.deleteConversation(row.conversationId)
                            }
                        }
                    }
                }
            }
        }

        // The last delete, with Undo, until the undo time has passed.
        Rectangle {
            Layout.fillWidth: true
            visible: AppController.undoDeleteTitle.length > 0
            implicitHeight: undoRow.implicitHeight + 8
            radius: Theme.radius
            color: Theme.notice
            RowLayout {
                id: undoRow
                anchors.fill: parent
                anchors.margins: 4
                Label {
                    Layout.fillWidth: true
                    text: qsTr("Deleted “%1”").arg(AppController.undoDeleteTitle)
                    elide: Text.ElideRight
                    color: Theme.text
                }
                Button {
                    objectName: "undoDelete"
                    text: qsTr("Undo")
                    onClicked: AppController.undoDelete()
                    Accessible.name: qsTr("Undo the delete")
                }
            }
        }
    }

    FileDialog {
        id: exportDialog
        property var conversationId: 0
        property string format: "md"
        function ask(id, fmt) {
            conversationId = id
            format = fmt
            open()
        }
        title: qsTr("Export")
        fileMode: FileDialog.SaveFile
        nameFilters: format === "json" ? [qsTr("JSON (*.json)")] : [qsTr("Markdown (*.md)")]
        onAccepted: {
            let file = String(selectedFile)
            const suffix = "." + format
            if (!file.endsWith(suffix))
                file += suffix
            const error = AppController.exportConversations(conversationId, file, format)
            if (error.length > 0)
                errorDialog.show(error)
        }
    }

    FileDialog {
        id: importDialog
        title: qsTr("Import chats")
        fileMode: FileDialog.OpenFile
        nameFilters: [qsTr("Ember export (*.json)")]
        onAccepted: {
            const error = AppController.importConversations(selectedFile)
            if (error.length > 0)
                errorDialog.show(error)
        }
    }

    Dialog {
        id: errorDialog
        function show(text) { errorText.text = text; open() }
        parent: Overlay.overlay
        anchors.centerIn: parent
        modal: true
        title: qsTr("That did not work")
        standardButtons: Dialog.Ok
        Label { id: errorText; wrapMode: Text.Wrap; width: 360 }
    }
}
