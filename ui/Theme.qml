pragma Singleton
import QtQuick

// Colours and sizes in one place. Light or dark follows the system palette.
QtObject {
    readonly property SystemPalette palette: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property SystemPalette disabledPalette: SystemPalette { colorGroup: SystemPalette.Disabled }
    readonly property bool dark: palette.window.hslLightness < 0.5

    readonly property color window: palette.window
    readonly property color base: palette.base
    readonly property color text: palette.windowText
    readonly property color muted: dark ? "#a3a3ad" : "#63636d"
    readonly property color sidebar: dark ? Qt.darker(palette.window, 1.25) : Qt.darker(palette.window, 1.04)
    readonly property color userBubble: dark ? "#26415f" : "#dcebff"
    readonly property color assistantBubble: dark ? "#2b2b31" : "#ffffff"
    readonly property color bubbleBorder: dark ? "#3a3a42" : "#dedee4"
    readonly property color accent: "#e8651a"
    readonly property color danger: dark ? "#ff7b7b" : "#c62828"
    readonly property color notice: dark ? "#4a3b12" : "#fff4d6"
    readonly property color codeBackground: dark ? "#1c1c21" : "#f4f4f7"

    readonly property int radius: 10
    readonly property int spacing: 8
    readonly property int sidebarWidth: 260
    readonly property int settingsWidth: 320
    readonly property string monoFamily: "monospace"
}
