import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Where the user types. Enter sends, Shift+Enter starts a new line. It takes typing at once,
// even while the model loads; Enter then (or while an answer streams) queues the message, shown
// above the field until it goes out, or says why it cannot be sent. A Stop button replaces Send
// while an answer is streaming.
Pane {
    id: composer
    padding: 10
    readonly property string blockReason: AppController.composerBlockReason
    // Why the last Enter did not send, or why dropped files were not attached, until the text
    // changes.
    property string refusal: ""
    // A paste longer than this is not put into the field: laying out a text document of a
    // megabyte stalls the window for a second or more (Qt Quick lays out all of it at once). It is
    // kept here, shown as a line with its size, and sent after what is typed.
    readonly property int inlinePasteLimit: 20000
    property string pasted: ""
    // Files dropped on the composer, each {name, block, characters} (AppController
    // .readDroppedFile): sent after the pasted block, in the order they came.
    property var attachments: []
    // The message as it will be sent: the typed text, the pasted block, then each file's block.
    function messageText() {
        let parts = input.text.trim().length > 0 ? [input.text] : []
        if (pasted.length > 0)
            parts.push(pasted)
        for (const file of attachments)
            parts.push(file.block)
        return parts.length === 0 ? input.text : parts.join("\n\n")
    }
    // Dropped files: a model file (.gguf) is opened as the model menu would; any other file is
    // attached when it is text, else the composer says why not (one line per file).
    function takeFiles(urls) {
        let taken = attachments.slice()
        let refused = []
        for (const url of urls) {
            if (String(url).toLowerCase().endsWith(".gguf")) {
                AppController.loadModelUrl(url)
                continue
            }
            const file = AppController.readDroppedFile(url)
            if (file.error)
                refused.push(file.error)
            else
                taken.push(file)
        }
        attachments = taken
        refusal = refused.join("\n")
        input.forceActiveFocus()
    }
    function removeAttachment(index) {
        let kept = attachments.slice()
        kept.splice(index, 1)
        attachments = kept
    }
    function sendNow() {
        const text = messageText()
        if (text.trim().length === 0)
            return
        const why = AppController.sendOrQueue(text)
        if (why.length === 0) {
            input.clear()
            pasted = ""
            attachments = []
        }
        refusal = why
    }
    // Ctrl+V / Shift+Insert: a long text becomes the pasted block (replacing one there);
    // anything else is pasted into the field as usual. Returns whether it took the paste.
    function takeLongPaste() {
        const text = AppController.clipboardText()
        if (text.length <= inlinePasteLimit)
            return false
        pasted = text
        refusal = ""
        return true
    }
    // Text dropped on the composer, or pasted by a middle click (the primary selection), goes
    // the same way as Ctrl+V: a long text becomes the pasted block; a short one goes into the
    // field at `position` (a character index).
    function takeText(text, position) {
        if (text.length > inlinePasteLimit) {
            pasted = text
            refusal = ""
        } else {
            input.insert(position, text)
            input.cursorPosition = position + text.length
        }
        input.forceActiveFocus()
    }
    onPastedChanged: AppController.setDraft(messageText())
    onAttachmentsChanged: AppController.setDraft(messageText())
    // Focus comes back after an answer ends, unless the user is typing somewhere else.
    function takeFocusUnlessTypingElsewhere() {
        const current = Window.activeFocusItem
        if (current && current !== input && current.cursorPosition !== undefined)
            return
        input.forceActiveFocus()
    }
    Component.onCompleted: input.forceActiveFocus()

    background: Rectangle {
        color: Theme.window
        Rectangle { width: parent.width; height: 1; color: Theme.bubbleBorder }
    }

    Connections {
        target: AppController
        function onFocusComposer() { input.forceActiveFocus() }
        function onAnswerFinished() { composer.takeFocusUnlessTypingElsewhere() }
    }

    // Text or files dragged onto any part of the composer. A file manager's drag carries the
    // files' URLs and their paths as text too: the files win. A link dragged from a browser
    // (no local file among its URLs) goes in as its text.
    DropArea {
        objectName: "composerDropArea"
        parent: composer
        anchors.fill: parent
        z: 1
        onEntered: (drag) => {
            if (drag.hasUrls || drag.hasText)
                drag.accept(Qt.CopyAction)
            else
                drag.accepted = false
        }
        onDropped: (drop) => {
            const files = drop.hasUrls && drop.urls.some((url) => String(url).startsWith("file:"))
            if (files || (drop.hasUrls && !drop.hasText)) {
                composer.takeFiles(drop.urls)
            } else if (drop.hasText) {
                const at = mapToItem(input, drop.x, drop.y)
                composer.takeText(drop.text, input.positionAt(at.x, at.y))
            } else {
                return
            }
            drop.accept(Qt.CopyAction)
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        Label {
            objectName: "composerNotice"
            Layout.fillWidth: true
            visible: composer.blockReason.length > 0 || composer.refusal.length > 0
            text: composer.refusal.length > 0 ? composer.refusal : composer.blockReason
            color: AppController.modelError.length > 0 || composer.refusal.length > 0
                   ? Theme.danger : Theme.muted
            wrapMode: Text.Wrap
        }

        ContextMeter {
            Layout.fillWidth: true
        }

        RowLayout {
            Layout.fillWidth: true
            visible: composer.pasted.length > 0
            Label {
                objectName: "pastedBlock"
                Layout.fillWidth: true
                text: qsTr("Pasted text (%L1 characters), sent after what you type")
                      .arg(composer.pasted.length)
                elide: Text.ElideRight
            }
            ToolButton {
                text: qsTr("Remove")
                onClicked: composer.pasted = ""
                Accessible.name: qsTr("Remove the pasted text")
            }
        }

        Repeater {
            model: composer.attachments
            RowLayout {
                required property var modelData
                required property int index
                Layout.fillWidth: true
                Label {
                    objectName: "attachedFile"
                    Layout.fillWidth: true
                    text: qsTr("%1 (%L2 characters), sent after what you type")
                          .arg(modelData.name).arg(modelData.characters)
                    elide: Text.ElideMiddle
                }
                ToolButton {
                    text: qsTr("Remove")
                    onClicked: composer.removeAttachment(index)
                    Accessible.name: qsTr("Remove %1 from the message").arg(modelData.name)
                }
            }
        }

        RowLayout {
            Layout.fillWidth: true
            visible: AppController.queuedMessage.length > 0
            Label {
                objectName: "queuedMessage"
                Layout.fillWidth: true
                text: (AppController.storeOpening || AppController.storeError.length > 0
                       ? qsTr("Queued, sent once your chats are open: %1")
                       : qsTr("Queued, sent when the answer ends: %1")).arg(AppController.queuedMessage)
                elide: Text.ElideRight
                color: Theme.muted
            }
            ToolButton {
                text: qsTr("Cancel")
                onClicked: AppController.cancelQueued()
                Accessible.name: qsTr("Cancel the queued message")
            }
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
                    onTextChanged: {
                        composer.refusal = ""
                        AppController.setDraft(composer.messageText())
                    }
                    wrapMode: TextEdit.Wrap
                    font.pixelSize: 15
                    placeholderText: qsTr("Message Ember (Enter sends, Shift+Enter adds a line)")
                    Accessible.name: qsTr("Message")
                    Accessible.description: composer.blockReason
                    // A middle click pastes the primary selection here, long or short alike
                    // (Qt's own middle-click paste would put a long one into the field). Where
                    // there is no selection the click goes on to the field.
                    MouseArea {
                        objectName: "composerMiddleClick"
                        anchors.fill: parent
                        acceptedButtons: Qt.MiddleButton
                        property string selection: ""
                        onPressed: (mouse) => {
                            selection = AppController.selectionText()
                            mouse.accepted = selection.length > 0
                        }
                        onReleased: (mouse) => {
                            composer.takeText(selection, input.positionAt(mouse.x, mouse.y))
                            selection = ""
                        }
                    }
                    Keys.onPressed: (event) => {
                        if (event.matches(StandardKey.Paste) && composer.takeLongPaste()) {
                            event.accepted = true
                            return
                        }
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            event.accepted = true
                            composer.sendNow()
                        }
                    }
                }
            }

            Button {
                visible: !AppController.generating
                readonly property bool queues: AppController.modelLoading
                                               || AppController.storeOpening
                text: queues ? qsTr("Queue") : qsTr("Send")
                enabled: (composer.blockReason.length === 0 || queues)
                         && (input.text.trim().length > 0 || composer.pasted.length > 0)
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
