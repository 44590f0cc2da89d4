import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// The window: sidebar | chat (notice, messages, composer) | settings.
ApplicationWindow {
    id: window
    // Fits the screen it opens on; the last run's geometry wins when it is still on a screen.
    width: Math.min(1180, Screen.desktopAvailableWidth - 40)
    height: Math.min(760, Screen.desktopAvailableHeight - 60)
    minimumWidth: Math.min(720, Screen.desktopAvailableWidth)
    minimumHeight: Math.min(480, Screen.desktopAvailableHeight)
    visible: true
    color: Theme.window
    // The controls take the system palette (light or dark), group by group, whatever the
    // style's own defaults; re-applied when the system switches.
    function applySystemPalette() {
        const roles = ["window", "windowText", "base", "alternateBase", "text", "button",
                       "buttonText", "highlight", "highlightedText", "placeholderText", "light",
                       "midlight", "mid", "dark", "shadow"]
        for (const role of roles) {
            palette.active[role] = Theme.palette[role]
            palette.inactive[role] = Theme.palette[role]
            palette.disabled[role] = Theme.disabledPalette[role]
        }
    }
    function restoreGeometry() {
        const g = AppController.savedWindowGeometry()
        if (g.length === 4) {
            x = g[0]
            y = g[1]
            width = Math.min(g[2], Screen.desktopAvailableWidth)
            height = Math.min(g[3], Screen.desktopAvailableHeight)
        }
        if (AppController.savedWindowMaximized())
            visibility = Window.Maximized
    }
    // The saved geometry lives with the chats: applied once they are open (on a slow disk the
    // window shows first, at its default size, and moves when they are).
    Component.onCompleted: {
        applySystemPalette()
        if (!AppController.storeOpening)
            restoreGeometry()
    }
    property bool geometryRestored: false
    Connections {
        target: AppController
        function onStoreOpeningChanged() {
            if (!AppController.storeOpening && !window.geometryRestored) {
                window.geometryRestored = true
                window.restoreGeometry()
            }
        }
    }
    onClosing: AppController.saveWindowGeometry(x, y, width, height,
                                                visibility === Window.Maximized)
    Connections {
        target: Theme.palette
        function onPaletteChanged() { window.applySystemPalette() }
    }
    title: AppController.currentTitle.length > 0
           ? qsTr("Ember — %1").arg(AppController.currentTitle) : qsTr("Ember")

    // Opens the settings panel and an answer's details (the UI test's second picture).
    function showPanels(messageId) {
        settingsPanel.visible = true
        chat.openStats(messageId)
    }
    // The model picker open (the UI test's third picture).
    function showModelPicker() {
        chat.closeStats()
        modelPicker.openList()
    }

    Shortcut {
        sequence: StandardKey.New
        onActivated: AppController.newConversation()
    }
    Shortcut {
        sequence: StandardKey.Find
        onActivated: sidebar.focusSearch()
    }
    Shortcut {
        sequence: "Esc"
        enabled: AppController.generating
        onActivated: AppController.stop()
    }

    header: ToolBar {
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: Theme.spacing
            anchors.rightMargin: Theme.spacing
            ModelPicker {
                id: modelPicker
                Layout.fillWidth: true
            }
            ToolButton {
                text: settingsPanel.visible ? qsTr("Hide settings") : qsTr("Settings")
                checkable: true
                checked: settingsPanel.visible
                onToggled: settingsPanel.visible = checked
                Accessible.name: qsTr("Show or hide the conversation settings")
            }
        }
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        ConversationList {
            id: sidebar
            Layout.preferredWidth: Theme.sidebarWidth
            Layout.fillHeight: true
        }

        ColumnLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            Rectangle {
                Layout.fillWidth: true
                visible: AppController.notice.length > 0
                color: Theme.notice
                implicitHeight: noticeRow.implicitHeight + 12
                RowLayout {
                    id: noticeRow
                    anchors.fill: parent
                    anchors.margins: 6
                    Label {
                        Layout.fillWidth: true
                        text: AppController.notice
                        wrapMode: Text.Wrap
                        color: Theme.text
                    }
                    ToolButton {
                        text: "✕"
                        onClicked: AppController.dismissNotice()
                        Accessible.name: qsTr("Dismiss the notice")
                    }
                }
            }

            ModelLoadBar {
                Layout.fillWidth: true
            }

            ChatView {
                id: chat
                visible: !storePane.visible
                Layout.fillWidth: true
                Layout.fillHeight: true
            }

            StoreOpeningPane {
                id: storePane
                visible: AppController.storeOpening || AppController.storeError.length > 0
                Layout.fillWidth: true
                Layout.fillHeight: true
            }

            Composer {
                Layout.fillWidth: true
            }
        }

        SettingsPanel {
            id: settingsPanel
            visible: false
            Layout.preferredWidth: Theme.settingsWidth
            Layout.fillHeight: true
        }
    }
}
