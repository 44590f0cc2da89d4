import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// The open conversation's settings (over the app-wide defaults). Each value is checked as it is
// typed with the engine's own validation, and saved when valid.
Rectangle {
    id: panel
    color: Theme.sidebar

    ScrollView {
        anchors.fill: parent
        contentWidth: availableWidth

        ColumnLayout {
            width: parent.width
            anchors.margins: 12
            x: 12
            spacing: 10

            Label { text: qsTr("Chat settings"); font.pixelSize: 17; font.bold: true; topPadding: 12 }
            Label {
                Layout.fillWidth: true
                Layout.rightMargin: 24
                text: qsTr("These apply to the next message.")
                color: Theme.muted
                wrapMode: Text.Wrap
                font.pixelSize: 12
            }

            Label { text: qsTr("System prompt"); font.bold: true }
            TextArea {
                id: systemPrompt
                Layout.fillWidth: true
                Layout.rightMargin: 24
                Layout.preferredHeight: 90
                wrapMode: TextEdit.Wrap
                placeholderText: qsTr("You are a helpful assistant.")
                text: AppController.settings.systemPrompt || ""
                Accessible.name: qsTr("System prompt")
                onEditingFinished: AppController.setSetting("systemPrompt", text)
            }

            Repeater {
                model: [
                    { key: "temperature", label: qsTr("Temperature"), hint: qsTr("0 = always the most likely word"), from: 0, to: 2, step: 0.05, decimals: 2 },
                    { key: "topP", label: qsTr("Top-p"), hint: qsTr("0 to 1; 1 = off"), from: 0, to: 1, step: 0.01, decimals: 2 },
                    { key: "topK", label: qsTr("Top-k"), hint: qsTr("0 = off"), from: 0, to: 200, step: 1, decimals: 0 },
                    { key: "minP", label: qsTr("Min-p"), hint: qsTr("0 to 1; 0 = off"), from: 0, to: 1, step: 0.01, decimals: 2 },
                    { key: "repeatPenalty", label: qsTr("Repeat penalty"), hint: qsTr("1 = off"), from: 1, to: 2, step: 0.01, decimals: 2 },
                    { key: "maxTokens", label: qsTr("Max tokens"), hint: qsTr("-1 = until the model stops"), from: 0, to: 0, step: 1, decimals: 0 },
                    { key: "seed", label: qsTr("Seed"), hint: qsTr("random, or a number to repeat an answer"), from: 0, to: 0, step: 1, decimals: 0 }
                ]
                delegate: SettingField {
                    required property var modelData
                    Layout.fillWidth: true
                    Layout.rightMargin: 24
                    key: modelData.key
                    label: modelData.label
                    hint: modelData.hint
                    from: modelData.from
                    to: modelData.to
                    stepSize: modelData.step
                    decimals: modelData.decimals
                }
            }

            PresetBar {
                Layout.fillWidth: true
                Layout.rightMargin: 24
            }

            // Settings that the loaded engine was built with: they apply on the next reload.
            Label {
                text: qsTr("Needs a model reload")
                font.pixelSize: 15
                font.bold: true
                topPadding: 12
            }
            Repeater {
                model: [
                    { key: "contextLength", label: qsTr("Context length"), hint: qsTr("0 = the model's (up to 4096)") },
                    { key: "threads", label: qsTr("Threads"), hint: qsTr("0 = one per core") },
                    { key: "maxSequences", label: qsTr("Answers at once"), hint: qsTr("chats that can generate at the same time") }
                ]
                delegate: SettingField {
                    required property var modelData
                    Layout.fillWidth: true
                    Layout.rightMargin: 24
                    key: modelData.key
                    label: modelData.label
                    hint: modelData.hint
                }
            }

            // EngineOptions::backend. A device that cannot be used fails the reload with the
            // engine's message (shown next to the model), and the app stays usable.
            Label { text: qsTr("Compute device"); font.bold: true }
            ComboBox {
                id: device
                objectName: "deviceChoice"
                Layout.fillWidth: true
                Layout.rightMargin: 24
                textRole: "label"
                valueRole: "value"
                model: [
                    { value: "auto", label: qsTr("Auto (GPU when available)") },
                    { value: "cpu", label: qsTr("CPU") },
                    { value: "cuda", label: qsTr("CUDA GPU") }
                ]
                function reset() { currentIndex = Math.max(0, indexOfValue(AppController.settings.backend || "auto")) }
                Component.onCompleted: reset()
                Connections {
                    target: AppController
                    function onCurrentConversationChanged() { device.reset() }
                }
                onActivated: AppController.setSetting("backend", currentValue)
                Accessible.name: qsTr("Compute device")
            }

            Label { text: qsTr("Language"); font.bold: true }
            ComboBox {
                id: language
                Layout.fillWidth: true
                Layout.rightMargin: 24
                textRole: "label"
                valueRole: "value"
                model: [
                    { value: "system", label: qsTr("As the system (%1)").arg(Qt.locale().nativeLanguageName) },
                    { value: "en", label: "English" },
                    { value: "ko", label: "한국어" }
                ]
                Component.onCompleted: currentIndex = Math.max(0, indexOfValue(AppController.language))
                onActivated: AppController.setLanguage(currentValue)
                Accessible.name: qsTr("Language")
            }

            RowLayout {
                Layout.rightMargin: 24
                Button {
                    text: qsTr("Use for new chats")
                    onClicked: AppController.saveSettingsAsDefaults()
                    Accessible.name: qsTr("Save these settings as the defaults for new chats")
                }
                Button {
                    text: qsTr("Reload model")
                    enabled: AppController.modelName.length > 0 && !AppController.modelLoading
                    onClicked: AppController.reloadModel()
                    Accessible.name: qsTr("Reload the model with this context length, thread count, answers at once and compute device")
                }
            }
            ServerSettings { Layout.fillWidth: true; Layout.rightMargin: 24 }
            ConnectionsSettings { Layout.fillWidth: true }
            Item { Layout.preferredHeight: 12 }
        }
    }
}
