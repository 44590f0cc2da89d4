import QtQuick
import QtQuick.Controls
import Ember

// The active branch of the open conversation. Follows new text as it streams in, until the user
// scrolls up; scrolling back to the bottom turns following on again.
ListView {
    id: view
    clip: true
    spacing: 14
    topMargin: 16
    bottomMargin: 16
    model: AppController.messages
    boundsBehavior: Flickable.StopAtBounds
    // Delegates are made well beyond the viewport, so that the end is known after a tall message.
    cacheBuffer: 4000
    ScrollBar.vertical: ScrollBar { }
    Accessible.name: qsTr("Messages")

    property bool followTail: true
    property bool scrollingByCode: false

    function openStats(messageId) { statsPanel.openFor(messageId) }
    function closeStats() { statsPanel.close() }

    function scrollToEnd() {
        if (count === 0)
            return
        scrollingByCode = true
        // The last message's end at the view's end (positionViewAtEnd alone stops short while a
        // tall delegate above has not got its height yet).
        positionViewAtIndex(count - 1, ListView.End)
        if (!atYEnd)
            contentY = Math.max(originY - topMargin, originY + contentHeight + bottomMargin - height)
        scrollingByCode = false
    }

    // A new message (Send, an answer starting) shows the end: delegates of long messages take a
    // few frames to get their final height, so the view keeps going to the end for a moment.
    function followNewMessage() {
        followTail = true
        settle.remaining = 12
        settle.restart()
        Qt.callLater(scrollToEnd)
    }
    Timer {
        id: settle
        property int remaining: 0
        interval: 40
        repeat: true
        onTriggered: {
            if (view.followTail)
                view.scrollToEnd()
            if (--remaining <= 0)
                stop()
        }
    }

    onContentYChanged: if (!scrollingByCode && !settle.running) followTail = atYEnd
    onContentHeightChanged: if (followTail) Qt.callLater(scrollToEnd)
    onCountChanged: followNewMessage()

    delegate: MessageBubble {
        width: view.width
        onShowStats: (id) => statsPanel.openFor(id)
    }

    Connections {
        target: AppController
        function onScrollToMessage(messageId) {
            const row = AppController.messageRow(messageId)
            if (row < 0)
                return
            view.followTail = false
            view.scrollingByCode = true
            view.positionViewAtIndex(row, ListView.Center)
            view.scrollingByCode = false
        }
    }

    Label {
        anchors.centerIn: parent
        visible: view.count === 0
        text: AppController.modelLoaded ? qsTr("Ask anything. Your chats stay on this computer.")
                                        : qsTr("Choose a model to start chatting.")
        color: Theme.muted
        font.pixelSize: 16
    }

    StatsPanel {
        id: statsPanel
    }
}
