import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Ember

// Everything measured for one answer, and a chart of when each token arrived: a straight line is
// a steady stream, a step up is a stall.
Popup {
    id: popup
    property var details: ({})
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(640, parent ? parent.width - 40 : 640)
    modal: true
    padding: 16

    function openFor(messageId) {
        details = AppController.statsDetails(messageId)
        open()
        chart.requestPaint()
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label { text: qsTr("Answer statistics"); font.pixelSize: 17; font.bold: true }
        Label {
            visible: !popup.details.rows
            text: qsTr("No statistics were recorded for this answer.")
            color: Theme.muted
        }
        GridLayout {
            columns: 2
            columnSpacing: 16
            rowSpacing: 3
            Layout.fillWidth: true
            Repeater {
                model: popup.details.rows || []
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 0
                    text: modelData[0]
                    color: Theme.muted
                }
            }
            Repeater {
                model: popup.details.rows || []
                delegate: Label {
                    required property var modelData
                    required property int index
                    Layout.row: index
                    Layout.column: 1
                    Layout.fillWidth: true
                    text: modelData[1]
                    wrapMode: Text.WrapAnywhere
                }
            }
        }

        Label { text: qsTr("Token arrival (ms since sent) by token index"); font.bold: true }
        Canvas {
            id: chart
            Layout.fillWidth: true
            Layout.preferredHeight: 180
            Accessible.name: qsTr("Chart of token arrival times")
            onPaint: {
                const ctx = getContext("2d")
                ctx.reset()
                const times = popup.details.tokenTimes || []
                const left = 48, bottom = height - 20
                ctx.strokeStyle = Theme.muted
                ctx.fillStyle = Theme.muted
                ctx.font = "11px sans-serif"
                ctx.beginPath(); ctx.moveTo(left, 4); ctx.lineTo(left, bottom); ctx.lineTo(width - 4, bottom); ctx.stroke()
                if (times.length === 0)
                    return
                const maxT = Math.max(1, times[times.length - 1])
                const n = Math.max(1, times.length - 1)
                ctx.fillText(Math.round(maxT) + " ms", 2, 12)
                ctx.fillText("0", left - 12, bottom)
                ctx.fillText(String(times.length), width - 30, height - 4)
                ctx.strokeStyle = Theme.accent
                ctx.lineWidth = 2
                ctx.beginPath()
                for (let i = 0; i < times.length; ++i) {
                    const x = left + (width - left - 8) * i / n
                    const y = bottom - (bottom - 8) * times[i] / maxT
                    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y)
                }
                ctx.stroke()
            }
        }
        Button {
            Layout.alignment: Qt.AlignRight
            text: qsTr("Close")
            onClicked: popup.close()
        }
    }
}
