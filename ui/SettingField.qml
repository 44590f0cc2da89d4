import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// One setting: a number field (and, where the value has a natural range, a slider beside it),
// validated as typed by the engine's own checks, saved when valid.
ColumnLayout {
    id: field
    required property string key
    required property string label
    property string hint
    property string error
    // A slider when `to` > `from`; `decimals` for the text it writes.
    property real from: 0
    property real to: 0
    property real stepSize: 0.01
    property int decimals: 2
    readonly property bool hasSlider: to > from
    spacing: 2

    function reset() {
        const value = AppController.settings[key]
        input.text = value === undefined ? "" : String(value)
        error = ""
        syncSlider()
    }
    function syncSlider() {
        const v = Number(input.text)
        if (hasSlider && input.text.length > 0 && !isNaN(v))
            slider.value = Math.min(to, Math.max(from, v))
    }
    function save(text) {
        field.error = AppController.settingError(field.key, text)
        if (field.error.length === 0)
            AppController.setSetting(field.key, text)
    }
    Component.onCompleted: reset()
    Connections {
        target: AppController
        function onCurrentConversationChanged() { field.reset() }
        function onSettingsChanged() { if (!input.activeFocus && !slider.pressed) field.reset() }
    }

    Label { text: field.label; font.bold: true }
    RowLayout {
        Layout.fillWidth: true
        Slider {
            id: slider
            visible: field.hasSlider
            Layout.fillWidth: true
            from: field.from
            to: field.to
            stepSize: field.stepSize
            Accessible.name: field.label
            onMoved: {
                input.text = value.toFixed(field.decimals)
                field.save(input.text)
            }
        }
        TextField {
            id: input
            Layout.fillWidth: !field.hasSlider
            Layout.preferredWidth: field.hasSlider ? 72 : -1
            Accessible.name: field.label
            Accessible.description: field.error.length > 0 ? field.error : field.hint
            onTextEdited: {
                field.save(text)
                field.syncSlider()
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text.length > 0
        text: field.error.length > 0 ? field.error : field.hint
        color: field.error.length > 0 ? Theme.danger : Theme.muted
        wrapMode: Text.Wrap
        font.pixelSize: 12
    }
}
