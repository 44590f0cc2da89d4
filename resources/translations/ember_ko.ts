<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="ko_KR">
<context>
    <name>AppController</name>
    <message>
        <source>Loading the model…</source>
        <translation>모델을 불러오는 중…</translation>
    </message>
    <message>
        <source>No model loaded: choose one from the model menu.</source>
        <translation>불러온 모델이 없습니다: 모델 메뉴에서 하나를 고르세요.</translation>
    </message>
    <message>
        <source>The model could not be loaded: choose another one, or another compute device in Settings.</source>
        <translation>모델을 불러오지 못했습니다: 다른 모델이나 설정에서 다른 연산 장치를 고르세요.</translation>
    </message>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message numerus="yes">
        <source>%n older message(s) were left out to fit the context window.</source>
        <translation>
            <numerusform>컨텍스트 창에 맞추려고 오래된 메시지 %n개를 뺐습니다.</numerusform>
        </translation>
    </message>
    <message>
        <source>The chat database was damaged and has been set aside as %1; a new one was started.</source>
        <translation>대화 데이터베이스가 손상되어 %1(으)로 옮겨 두고 새로 시작했습니다.</translation>
    </message>
    <message numerus="yes">
        <source>%n answer(s) were cut short when Ember last closed; they are marked as interrupted.</source>
        <translation>
            <numerusform>Ember가 지난번에 닫힐 때 답변 %n개가 중간에 끊겨 ‘중단됨’으로 표시했습니다.</numerusform>
        </translation>
    </message>
    <message>
        <source>The chat database could not be opened: %1</source>
        <translation>대화 데이터베이스를 열 수 없습니다: %1</translation>
    </message>
    <message>
        <source>%1 · context %2 · %3</source>
        <translation>%1 · 컨텍스트 %2 · %3</translation>
    </message>
    <message>
        <source>Could not write %1: %2</source>
        <translation>%1에 쓸 수 없습니다: %2</translation>
    </message>
    <message>
        <source>Saved to %1</source>
        <translation>%1에 저장했습니다</translation>
    </message>
    <message>
        <source>Could not read %1: %2</source>
        <translation>%1을(를) 읽을 수 없습니다: %2</translation>
    </message>
    <message>
        <source>%1 is not a JSON file.</source>
        <translation>%1은(는) JSON 파일이 아닙니다.</translation>
    </message>
    <message numerus="yes">
        <source>Imported %n conversation(s).</source>
        <translation>
            <numerusform>대화 %n개를 가져왔습니다.</numerusform>
        </translation>
    </message>
    <message>
        <source>%1 once the loaded model is unloaded</source>
        <translation>불러온 모델을 내린 뒤 %1</translation>
    </message>
    <message>
        <source>Type a message first.</source>
        <translation>먼저 메시지를 입력하세요.</translation>
    </message>
    <message>
        <source>The message could not be sent (see the notice above).</source>
        <translation>메시지를 보내지 못했습니다(위의 알림을 보세요).</translation>
    </message>
    <message>
        <source>A message is already waiting to be sent: wait for it, or cancel it.</source>
        <translation>이미 보낼 메시지가 기다리고 있습니다: 기다리거나 취소하세요.</translation>
    </message>
    <message>
        <source>A message waits in another chat: it goes first.</source>
        <translation>다른 대화에 기다리는 메시지가 있습니다: 그것이 먼저 갑니다.</translation>
    </message>
    <message>
        <source>The language changes the next time Ember starts.</source>
        <translation>언어는 Ember를 다음에 시작할 때 바뀝니다.</translation>
    </message>
    <message>
        <source>The model&apos;s chat template could not be used for this conversation: %1</source>
        <translation>이 대화에는 모델의 채팅 템플릿을 쓸 수 없었습니다: %1</translation>
    </message>
    <message>
        <source>Loading %1 %2%</source>
        <translation>%1 불러오는 중 %2%</translation>
    </message>
    <message>
        <source>Loading %1 was cancelled; going back to %2.</source>
        <translation>%1 불러오기를 취소했습니다. %2(으)로 돌아갑니다.</translation>
    </message>
    <message>
        <source>Loading %1 was cancelled; no model is loaded.</source>
        <translation>%1 불러오기를 취소했습니다. 불러온 모델이 없습니다.</translation>
    </message>
    <message>
        <source>The chats are open read-only: %1</source>
        <translation>대화를 읽기 전용으로 열었습니다: %1</translation>
    </message>
    <message>
        <source>The chat database was updated to this version of Ember; a copy of the old one was kept as %1.</source>
        <translation>대화 데이터베이스를 이 버전의 Ember에 맞게 바꾸었습니다. 이전 데이터베이스의 사본은 %1(으)로 남겨 두었습니다.</translation>
    </message>
    <message>
        <source>The conversations were not imported: %1</source>
        <translation>대화를 가져오지 못했습니다: %1</translation>
    </message>
    <message>
        <source>%1 is no longer in Settings → Connections: choose another model for new answers.</source>
        <translation>%1이(가) 더 이상 설정 → 연결에 없습니다: 새 답변에 쓸 다른 모델을 고르세요.</translation>
    </message>
    <message>
        <source>%1 did not answer (%2): answers on %3 fail until it is back, or choose another model.</source>
        <translation>%1이(가) 응답하지 않았습니다 (%2): 다시 응답할 때까지 %3의 답변은 실패합니다. 다른 모델을 고를 수도 있습니다.</translation>
    </message>
    <message>
        <source>%1 no longer offers %2: choose another model.</source>
        <translation>%1이(가) 더 이상 %2을(를) 제공하지 않습니다: 다른 모델을 고르세요.</translation>
    </message>
    <message>
        <source>asking %1…</source>
        <translation>%1에 묻는 중…</translation>
    </message>
    <message>
        <source>%1 did not answer: %2</source>
        <translation>%1이(가) 응답하지 않았습니다: %2</translation>
    </message>
    <message>
        <source>%1 offers no models</source>
        <translation>%1에 제공하는 모델이 없습니다</translation>
    </message>
    <message>
        <source>%1 on %2 was in use, but %2 is no longer in Settings → Connections: choose a model.</source>
        <translation>%2의 %1을(를) 쓰고 있었지만 %2이(가) 더 이상 설정 → 연결에 없습니다: 모델을 고르세요.</translation>
    </message>
    <message>
        <source>The key of %1 could not be read: %2</source>
        <translation>%1의 키를 읽을 수 없습니다: %2</translation>
    </message>
    <message>
        <source>Exporting to %1…</source>
        <translation>%1(으)로 내보내는 중…</translation>
    </message>
    <message>
        <source>Importing %1…</source>
        <translation>%1 가져오는 중…</translation>
    </message>
    <message>
        <source>%1 Try again when it has finished.</source>
        <translation>%1 끝난 뒤에 다시 시도하세요.</translation>
    </message>
    <message>
        <source>Checking the chat database…</source>
        <translation>대화 데이터베이스를 확인하는 중…</translation>
    </message>
    <message>
        <source>Keeping a copy of your chats before updating them…</source>
        <translation>업데이트하기 전에 대화의 사본을 보관하는 중…</translation>
    </message>
    <message>
        <source>Updating your chats to this version of Ember…</source>
        <translation>대화를 이 버전의 Ember에 맞게 업데이트하는 중…</translation>
    </message>
    <message>
        <source>Opening your chats…</source>
        <translation>대화를 여는 중…</translation>
    </message>
    <message>
        <source>(step %1 of %2)</source>
        <translation>(%2단계 중 %1단계)</translation>
    </message>
    <message>
        <source>%1 is not a file on this computer.</source>
        <translation>%1은(는) 이 컴퓨터에 있는 파일이 아닙니다.</translation>
    </message>
    <message>
        <source>%1 is a folder: drop the files in it instead.</source>
        <translation>%1은(는) 폴더입니다. 폴더 안의 파일을 끌어다 놓으세요.</translation>
    </message>
    <message>
        <source>%1 could not be read: %2</source>
        <translation>%1을(를) 읽을 수 없습니다: %2</translation>
    </message>
    <message>
        <source>%1 is %2; files up to %3 can be attached.</source>
        <translation>%1의 크기는 %2입니다. %3 이하의 파일만 첨부할 수 있습니다.</translation>
    </message>
    <message>
        <source>%1 is not a text file: only text (UTF-8) can be attached.</source>
        <translation>%1은(는) 텍스트 파일이 아닙니다. 텍스트(UTF-8) 파일만 첨부할 수 있습니다.</translation>
    </message>
</context>
<context>
    <name>ChatView</name>
    <message>
        <source>Messages</source>
        <translation>메시지</translation>
    </message>
    <message>
        <source>Ask anything. Your chats stay on this computer.</source>
        <translation>무엇이든 물어보세요. 대화는 이 컴퓨터에만 남습니다.</translation>
    </message>
    <message>
        <source>Choose a model to start chatting.</source>
        <translation>대화를 시작하려면 모델을 고르세요.</translation>
    </message>
</context>
<context>
    <name>Composer</name>
    <message>
        <source>Queued, sent when the answer ends: %1</source>
        <translation>대기 중, 답변이 끝나면 보냅니다: %1</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Cancel the queued message</source>
        <translation>대기 중인 메시지 취소</translation>
    </message>
    <message>
        <source>Message Ember (Enter sends, Shift+Enter adds a line)</source>
        <translation>Ember에게 메시지 보내기 (Enter는 보내기, Shift+Enter는 줄 바꿈)</translation>
    </message>
    <message>
        <source>Message</source>
        <translation>메시지</translation>
    </message>
    <message>
        <source>Queue</source>
        <translation>대기열에 넣기</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>보내기</translation>
    </message>
    <message>
        <source>Send the message</source>
        <translation>메시지 보내기</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>멈추기</translation>
    </message>
    <message>
        <source>Stop the answer (Esc)</source>
        <translation>답변 멈추기 (Esc)</translation>
    </message>
    <message>
        <source>Pasted text (%L1 characters), sent after what you type</source>
        <translation>붙여 넣은 텍스트(%L1자), 입력한 내용 뒤에 보냅니다</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>Remove the pasted text</source>
        <translation>붙여 넣은 텍스트 삭제</translation>
    </message>
    <message>
        <source>Queued, sent once your chats are open: %1</source>
        <translation>대기 중, 대화가 열리면 보냅니다: %1</translation>
    </message>
    <message>
        <source>%1 (%L2 characters), sent after what you type</source>
        <translation>%1(%L2자), 입력한 내용 뒤에 보냅니다</translation>
    </message>
    <message>
        <source>Remove %1 from the message</source>
        <translation>메시지에서 %1 빼기</translation>
    </message>
</context>
<context>
    <name>ConnectionsSettings</name>
    <message>
        <source>Connections</source>
        <translation>연결</translation>
    </message>
    <message>
        <source>Servers that speak the OpenAI API: vLLM, llama.cpp&apos;s server, another Ember.</source>
        <translation>OpenAI API를 쓰는 서버: vLLM, llama.cpp 서버, 다른 Ember.</translation>
    </message>
    <message>
        <source>Key: %1</source>
        <translation>키: %1</translation>
    </message>
    <message>
        <source>Connection status</source>
        <translation>연결 상태</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>확인하는 중…</translation>
    </message>
    <message>
        <source>Test connection</source>
        <translation>연결 확인</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>Add a server</source>
        <translation>서버 추가</translation>
    </message>
    <message>
        <source>Name (e.g. team GPU server)</source>
        <translation>이름 (예: 팀 GPU 서버)</translation>
    </message>
    <message>
        <source>Server name</source>
        <translation>서버 이름</translation>
    </message>
    <message>
        <source>http://192.168.1.20:8000/v1</source>
        <translation>http://192.168.1.20:8000/v1</translation>
    </message>
    <message>
        <source>Server address</source>
        <translation>서버 주소</translation>
    </message>
    <message>
        <source>API key (optional)</source>
        <translation>API 키 (선택)</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 키</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>추가</translation>
    </message>
</context>
<context>
    <name>ContextMeter</name>
    <message>
        <source>Context used</source>
        <translation>사용한 컨텍스트</translation>
    </message>
    <message>
        <source>%1 / %2 tokens of context</source>
        <translation>컨텍스트 %2 토큰 중 %1</translation>
    </message>
    <message>
        <source>%1: this message is too long (room for %2 with the answer)</source>
        <translation>%1: 메시지가 너무 깁니다 (답변을 빼면 %2 토큰까지)</translation>
    </message>
    <message numerus="yes">
        <source>%1: the %n oldest message(s) will be left out</source>
        <translation>
            <numerusform>%1: 가장 오래된 메시지 %n개가 빠집니다</numerusform>
        </translation>
    </message>
    <message>
        <source>The chat and your draft as the model reads them. %1 tokens are left for the prompt; the rest of the context is kept for the answer.</source>
        <translation>모델이 읽는 그대로의 대화와 작성 중인 글입니다. 프롬프트에는 %1 토큰이 남고, 나머지 컨텍스트는 답변용입니다.</translation>
    </message>
    <message>
        <source>context %1 tokens (counted by the server)</source>
        <translation>컨텍스트 %1 토큰 (서버가 센 값)</translation>
    </message>
    <message>
        <source>context: unknown (the server does not say)</source>
        <translation>컨텍스트: 알 수 없음 (서버가 알려 주지 않음)</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>New chat</source>
        <translation>새 대화</translation>
    </message>
    <message>
        <source>New chat (Ctrl+N)</source>
        <translation>새 대화 (Ctrl+N)</translation>
    </message>
    <message>
        <source>Export or import chats</source>
        <translation>대화 내보내기 또는 가져오기</translation>
    </message>
    <message>
        <source>Export all chats as Markdown…</source>
        <translation>모든 대화를 Markdown으로 내보내기…</translation>
    </message>
    <message>
        <source>Export all chats as JSON…</source>
        <translation>모든 대화를 JSON으로 내보내기…</translation>
    </message>
    <message>
        <source>Import chats from JSON…</source>
        <translation>JSON에서 대화 가져오기…</translation>
    </message>
    <message>
        <source>Search all chats (Ctrl+F)</source>
        <translation>모든 대화 검색 (Ctrl+F)</translation>
    </message>
    <message>
        <source>Search all chats</source>
        <translation>모든 대화 검색</translation>
    </message>
    <message>
        <source>Search results</source>
        <translation>검색 결과</translation>
    </message>
    <message>
        <source>No matches</source>
        <translation>결과 없음</translation>
    </message>
    <message>
        <source>Conversations</source>
        <translation>대화 목록</translation>
    </message>
    <message>
        <source>%1 (answering)</source>
        <translation>%1 (답변 중)</translation>
    </message>
    <message>
        <source>Chat name</source>
        <translation>대화 이름</translation>
    </message>
    <message>
        <source>answering…</source>
        <translation>답변 중…</translation>
    </message>
    <message>
        <source>Actions for %1</source>
        <translation>%1 작업</translation>
    </message>
    <message>
        <source>Unpin</source>
        <translation>고정 해제</translation>
    </message>
    <message>
        <source>Pin to top</source>
        <translation>맨 위에 고정</translation>
    </message>
    <message>
        <source>Rename</source>
        <translation>이름 바꾸기</translation>
    </message>
    <message>
        <source>Export as Markdown…</source>
        <translation>Markdown으로 내보내기…</translation>
    </message>
    <message>
        <source>Export as JSON (every version, with stats)…</source>
        <translation>JSON으로 내보내기 (모든 버전, 통계 포함)…</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>삭제</translation>
    </message>
    <message>
        <source>Deleted “%1”</source>
        <translation>“%1” 삭제됨</translation>
    </message>
    <message>
        <source>Undo</source>
        <translation>되돌리기</translation>
    </message>
    <message>
        <source>Undo the delete</source>
        <translation>삭제 되돌리기</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>내보내기</translation>
    </message>
    <message>
        <source>JSON (*.json)</source>
        <translation>JSON (*.json)</translation>
    </message>
    <message>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <source>Import chats</source>
        <translation>대화 가져오기</translation>
    </message>
    <message>
        <source>Ember export (*.json)</source>
        <translation>Ember 내보내기 파일 (*.json)</translation>
    </message>
    <message>
        <source>That did not work</source>
        <translation>실패했습니다</translation>
    </message>
</context>
<context>
    <name>InferenceWorker</name>
    <message>
        <source>Loading %1</source>
        <translation>%1 불러오는 중</translation>
    </message>
    <message>
        <source>No model is loaded.</source>
        <translation>불러온 모델이 없습니다.</translation>
    </message>
    <message>
        <source>A request with this key is already running.</source>
        <translation>같은 키의 요청이 이미 실행 중입니다.</translation>
    </message>
</context>
<context>
    <name>LiveStatus</name>
    <message>
        <source>Starting…</source>
        <translation>시작하는 중…</translation>
    </message>
    <message>
        <source>Waiting for a free slot (other chats are answering)…</source>
        <translation>빈 자리를 기다리는 중 (다른 대화가 답변 중)…</translation>
    </message>
    <message>
        <source>Reading prompt %1/%2 tokens (%3 reused)</source>
        <translation>프롬프트 읽는 중 %1/%2 토큰 (%3 재사용)</translation>
    </message>
    <message>
        <source>Reading prompt %1/%2 tokens</source>
        <translation>프롬프트 읽는 중 %1/%2 토큰</translation>
    </message>
    <message numerus="yes">
        <source>about %n s left</source>
        <translation>
            <numerusform>약 %n초 남음</numerusform>
        </translation>
    </message>
    <message>
        <source>Writing…</source>
        <translation>작성 중…</translation>
    </message>
    <message>
        <source>Writing · %1 tok/s</source>
        <translation>작성 중 · %1 토큰/초</translation>
    </message>
</context>
<context>
    <name>LocalApiServer</name>
    <message>
        <source>The API key could not be read (%1); set a key to turn the server on.</source>
        <translation>API 키를 읽을 수 없습니다(%1). 서버를 켜려면 키를 설정하세요.</translation>
    </message>
    <message>
        <source>Key kept %1.</source>
        <translation>API 키: %1.</translation>
    </message>
    <message>
        <source>The API key could not be saved: %1</source>
        <translation>API 키를 저장할 수 없습니다: %1</translation>
    </message>
</context>
<context>
    <name>Main</name>
    <message>
        <source>Ember — %1</source>
        <translation>Ember — %1</translation>
    </message>
    <message>
        <source>Ember</source>
        <translation>Ember</translation>
    </message>
    <message>
        <source>Hide settings</source>
        <translation>설정 숨기기</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>설정</translation>
    </message>
    <message>
        <source>Show or hide the conversation settings</source>
        <translation>대화 설정 보이기/숨기기</translation>
    </message>
    <message>
        <source>Dismiss the notice</source>
        <translation>알림 닫기</translation>
    </message>
</context>
<context>
    <name>MessageBubble</name>
    <message>
        <source>Show the whole message (%1 characters)</source>
        <translation>메시지 전체 보기 (%1자)</translation>
    </message>
    <message>
        <source>Prompt reading progress</source>
        <translation>프롬프트 읽기 진행</translation>
    </message>
    <message>
        <source>Edit the message</source>
        <translation>메시지 고치기</translation>
    </message>
    <message>
        <source>Save and ask again</source>
        <translation>저장하고 다시 묻기</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Error: %1</source>
        <translation>오류: %1</translation>
    </message>
    <message>
        <source>Stopped</source>
        <translation>멈춤</translation>
    </message>
    <message>
        <source>Interrupted (Ember closed before the answer finished)</source>
        <translation>중단됨 (답변이 끝나기 전에 Ember가 닫혔습니다)</translation>
    </message>
    <message>
        <source>Previous version</source>
        <translation>이전 버전</translation>
    </message>
    <message>
        <source>Next version</source>
        <translation>다음 버전</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>복사됨</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy the message</source>
        <translation>메시지 복사</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>고치기</translation>
    </message>
    <message>
        <source>Edit and ask again</source>
        <translation>고쳐서 다시 묻기</translation>
    </message>
    <message>
        <source>Regenerate</source>
        <translation>다시 생성</translation>
    </message>
    <message>
        <source>Write another answer</source>
        <translation>다른 답변 쓰기</translation>
    </message>
    <message>
        <source>Answer statistics: %1</source>
        <translation>답변 통계: %1</translation>
    </message>
    <message>
        <source>%1
Click for details</source>
        <translation>%1
누르면 자세히 봅니다</translation>
    </message>
</context>
<context>
    <name>MessageSegment</name>
    <message>
        <source>code</source>
        <translation>코드</translation>
    </message>
    <message>
        <source>Copied</source>
        <translation>복사됨</translation>
    </message>
    <message>
        <source>Copy</source>
        <translation>복사</translation>
    </message>
    <message>
        <source>Copy the code</source>
        <translation>코드 복사</translation>
    </message>
    <message>
        <source>Code: %1</source>
        <translation>코드: %1</translation>
    </message>
</context>
<context>
    <name>ModelListModel</name>
    <message>
        <source>Open file...</source>
        <translation>파일 열기...</translation>
    </message>
</context>
<context>
    <name>ModelLoadBar</name>
    <message>
        <source>Cancel</source>
        <translation>취소</translation>
    </message>
    <message>
        <source>Cancel loading the model</source>
        <translation>모델 불러오기 취소</translation>
    </message>
</context>
<context>
    <name>ModelPicker</name>
    <message>
        <source>Choose a model</source>
        <translation>모델 고르기</translation>
    </message>
    <message>
        <source>Model: %1</source>
        <translation>모델: %1</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>불러오는 중…</translation>
    </message>
    <message>
        <source>Open a GGUF model</source>
        <translation>GGUF 모델 열기</translation>
    </message>
    <message>
        <source>GGUF models (*.gguf)</source>
        <translation>GGUF 모델 (*.gguf)</translation>
    </message>
    <message>
        <source>All files (*)</source>
        <translation>모든 파일 (*)</translation>
    </message>
    <message>
        <source>%1 on %2</source>
        <translation>%2의 %1</translation>
    </message>
</context>
<context>
    <name>PresetBar</name>
    <message>
        <source>Presets</source>
        <translation>프리셋</translation>
    </message>
    <message>
        <source>No presets yet</source>
        <translation>아직 프리셋이 없습니다</translation>
    </message>
    <message>
        <source>Preset</source>
        <translation>프리셋</translation>
    </message>
    <message>
        <source>Apply</source>
        <translation>적용</translation>
    </message>
    <message>
        <source>Apply the preset to this chat</source>
        <translation>이 대화에 프리셋 적용</translation>
    </message>
    <message>
        <source>Name for these settings</source>
        <translation>이 설정의 이름</translation>
    </message>
    <message>
        <source>Preset name</source>
        <translation>프리셋 이름</translation>
    </message>
    <message>
        <source>Save</source>
        <translation>저장</translation>
    </message>
    <message>
        <source>Save the system prompt and settings as a preset</source>
        <translation>시스템 프롬프트와 설정을 프리셋으로 저장</translation>
    </message>
    <message>
        <source>New chats start with this preset</source>
        <translation>새 대화를 이 프리셋으로 시작</translation>
    </message>
    <message>
        <source>Default for new chats: %1</source>
        <translation>새 대화 기본값: %1</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <source>Enter a whole number.</source>
        <translation>정수를 입력하세요.</translation>
    </message>
    <message>
        <source>Enter a number.</source>
        <translation>숫자를 입력하세요.</translation>
    </message>
    <message>
        <source>The compute device must be auto, cpu or cuda.</source>
        <translation>연산 장치는 auto, cpu, cuda 중 하나여야 합니다.</translation>
    </message>
    <message>
        <source>Unknown setting %1.</source>
        <translation>알 수 없는 설정 %1.</translation>
    </message>
    <message>
        <source>Threads must be 0 (automatic) to 1024.</source>
        <translation>스레드는 0(자동)에서 1024 사이여야 합니다.</translation>
    </message>
    <message>
        <source>Answers at once must be 1 to %1.</source>
        <translation>동시 답변 수는 1에서 %1 사이여야 합니다.</translation>
    </message>
    <message>
        <source>reused %1 of %2 prompt tokens</source>
        <translation>프롬프트 토큰 %2개 중 %1개 재사용</translation>
    </message>
    <message>
        <source>TTFT %1 ms · %2 tok/s · %3 tokens</source>
        <translation>첫 토큰 %1 ms · %2 토큰/초 · %3 토큰</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>반복 페널티</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>최대 토큰</translation>
    </message>
    <message>
        <source>Chat template</source>
        <translation>채팅 템플릿</translation>
    </message>
    <message>
        <source>Older messages left out</source>
        <translation>빠진 오래된 메시지</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>예</translation>
    </message>
    <message>
        <source>no</source>
        <translation>아니요</translation>
    </message>
    <message>
        <source>Queue wait</source>
        <translation>대기 시간</translation>
    </message>
    <message>
        <source>Tokenize</source>
        <translation>토큰화</translation>
    </message>
    <message>
        <source>Prefill</source>
        <translation>프롬프트 처리</translation>
    </message>
    <message>
        <source>Prefill speed</source>
        <translation>프롬프트 처리 속도</translation>
    </message>
    <message>
        <source>Time to first token</source>
        <translation>첫 토큰까지 시간</translation>
    </message>
    <message>
        <source>Inter-token p50 / p95 / max</source>
        <translation>토큰 간격 p50 / p95 / 최대</translation>
    </message>
    <message>
        <source>Decode speed</source>
        <translation>생성 속도</translation>
    </message>
    <message>
        <source>Total</source>
        <translation>전체</translation>
    </message>
    <message>
        <source>Prompt / cached / generated tokens</source>
        <translation>프롬프트 / 캐시 / 생성 토큰</translation>
    </message>
    <message>
        <source>Prompt reuse (prefix cache)</source>
        <translation>프롬프트 재사용 (접두사 캐시)</translation>
    </message>
    <message>
        <source>Finish reason</source>
        <translation>종료 이유</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>시드</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>모델</translation>
    </message>
    <message>
        <source>Backend</source>
        <translation>백엔드</translation>
    </message>
    <message>
        <source>memory need unknown: %1</source>
        <translation>필요한 메모리를 알 수 없음: %1</translation>
    </message>
    <message>
        <source>too big: context %1 is more than the model&apos;s %2</source>
        <translation>너무 큼: 컨텍스트 %1이(가) 모델의 %2보다 큽니다</translation>
    </message>
    <message>
        <source>memory</source>
        <translation>메모리</translation>
    </message>
    <message>
        <source>fits: needs %1 of %2 free in %3</source>
        <translation>맞음: %3의 여유 %2 중 %1 필요</translation>
    </message>
    <message>
        <source>too big for %1: %2</source>
        <translation>%1에 너무 큼: %2</translation>
    </message>
    <message>
        <source>in the system keyring</source>
        <translation>시스템 키링에 저장</translation>
    </message>
    <message>
        <source>in a file only you can read (no keyring service)</source>
        <translation>본인만 읽을 수 있는 파일에 저장 (키링 서비스 없음)</translation>
    </message>
    <message>
        <source>no key</source>
        <translation>키 없음</translation>
    </message>
    <message>
        <source>cannot write %1: %2</source>
        <translation>%1에 쓸 수 없습니다: %2</translation>
    </message>
    <message>
        <source>cannot read the key file %1</source>
        <translation>키 파일 %1을(를) 읽을 수 없습니다</translation>
    </message>
    <message>
        <source>the keyring has no key for this server: %1</source>
        <translation>키링에 이 서버의 키가 없습니다: %1</translation>
    </message>
    <message numerus="yes">
        <source>%n model(s), round trip %1 ms</source>
        <translation>
            <numerusform>모델 %n개, 왕복 %1 ms</numerusform>
        </translation>
    </message>
    <message>
        <source>remote · %1 · %2</source>
        <translation>원격 · %1 · %2</translation>
    </message>
</context>
<context>
    <name>ReasoningSection</name>
    <message>
        <source>Thinking…</source>
        <translation>생각하는 중…</translation>
    </message>
    <message numerus="yes">
        <source>Thought for %n s</source>
        <translation>
            <numerusform>%n초 동안 생각함</numerusform>
        </translation>
    </message>
    <message>
        <source>Hide the model&apos;s reasoning</source>
        <translation>모델의 추론 숨기기</translation>
    </message>
    <message>
        <source>Show the model&apos;s reasoning</source>
        <translation>모델의 추론 보기</translation>
    </message>
</context>
<context>
    <name>RemoteChat</name>
    <message>
        <source>A request with this key is already running.</source>
        <translation>같은 키의 요청이 이미 실행 중입니다.</translation>
    </message>
</context>
<context>
    <name>ServerSettings</name>
    <message>
        <source>Local API server</source>
        <translation>로컬 API 서버</translation>
    </message>
    <message>
        <source>Serve this model on this computer</source>
        <translation>이 컴퓨터에서 이 모델을 제공</translation>
    </message>
    <message>
        <source>Local API server on or off</source>
        <translation>로컬 API 서버 켜기/끄기</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>포트</translation>
    </message>
    <message>
        <source>Local API server port</source>
        <translation>로컬 API 서버 포트</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 키</translation>
    </message>
    <message>
        <source>none: any program on this computer may use it</source>
        <translation>없음: 이 컴퓨터의 어떤 프로그램이든 쓸 수 있습니다</translation>
    </message>
    <message>
        <source>Local API server key</source>
        <translation>로컬 API 서버 키</translation>
    </message>
    <message>
        <source>Hide</source>
        <translation>숨기기</translation>
    </message>
    <message>
        <source>Show</source>
        <translation>보이기</translation>
    </message>
    <message>
        <source>Show or hide the key</source>
        <translation>키 보이기/숨기기</translation>
    </message>
    <message>
        <source>New key</source>
        <translation>새 키</translation>
    </message>
    <message>
        <source>Generate a new API key</source>
        <translation>새 API 키 만들기</translation>
    </message>
    <message>
        <source>Base URL: %1</source>
        <translation>기본 URL: %1</translation>
    </message>
</context>
<context>
    <name>SettingsPanel</name>
    <message>
        <source>Chat settings</source>
        <translation>대화 설정</translation>
    </message>
    <message>
        <source>These apply to the next message.</source>
        <translation>다음 메시지부터 적용됩니다.</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>시스템 프롬프트</translation>
    </message>
    <message>
        <source>You are a helpful assistant.</source>
        <translation>당신은 도움이 되는 비서입니다.</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>온도</translation>
    </message>
    <message>
        <source>0 = always the most likely word</source>
        <translation>0 = 항상 가장 그럴듯한 단어</translation>
    </message>
    <message>
        <source>Top-p</source>
        <translation>Top-p</translation>
    </message>
    <message>
        <source>0 to 1; 1 = off</source>
        <translation>0에서 1; 1 = 끔</translation>
    </message>
    <message>
        <source>Top-k</source>
        <translation>Top-k</translation>
    </message>
    <message>
        <source>0 = off</source>
        <translation>0 = 끔</translation>
    </message>
    <message>
        <source>Min-p</source>
        <translation>Min-p</translation>
    </message>
    <message>
        <source>0 to 1; 0 = off</source>
        <translation>0에서 1; 0 = 끔</translation>
    </message>
    <message>
        <source>Repeat penalty</source>
        <translation>반복 페널티</translation>
    </message>
    <message>
        <source>1 = off</source>
        <translation>1 = 끔</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>최대 토큰</translation>
    </message>
    <message>
        <source>-1 = until the model stops</source>
        <translation>-1 = 모델이 멈출 때까지</translation>
    </message>
    <message>
        <source>Seed</source>
        <translation>시드</translation>
    </message>
    <message>
        <source>random, or a number to repeat an answer</source>
        <translation>random, 또는 답변을 되풀이할 숫자</translation>
    </message>
    <message>
        <source>Needs a model reload</source>
        <translation>모델을 다시 불러와야 적용</translation>
    </message>
    <message>
        <source>Context length</source>
        <translation>컨텍스트 길이</translation>
    </message>
    <message>
        <source>0 = the model&apos;s (up to 4096)</source>
        <translation>0 = 모델의 값 (최대 4096)</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>스레드</translation>
    </message>
    <message>
        <source>0 = one per core</source>
        <translation>0 = 코어당 하나</translation>
    </message>
    <message>
        <source>Answers at once</source>
        <translation>동시 답변 수</translation>
    </message>
    <message>
        <source>chats that can generate at the same time</source>
        <translation>동시에 답변할 수 있는 대화 수</translation>
    </message>
    <message>
        <source>Compute device</source>
        <translation>연산 장치</translation>
    </message>
    <message>
        <source>Auto (GPU when available)</source>
        <translation>자동 (가능하면 GPU)</translation>
    </message>
    <message>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <source>CUDA GPU</source>
        <translation>CUDA GPU</translation>
    </message>
    <message>
        <source>Use for new chats</source>
        <translation>새 대화에 사용</translation>
    </message>
    <message>
        <source>Save these settings as the defaults for new chats</source>
        <translation>이 설정을 새 대화의 기본값으로 저장</translation>
    </message>
    <message>
        <source>Reload model</source>
        <translation>모델 다시 불러오기</translation>
    </message>
    <message>
        <source>Reload the model with this context length, thread count, answers at once and compute device</source>
        <translation>이 컨텍스트 길이, 스레드 수, 동시 답변 수, 연산 장치로 모델을 다시 불러오기</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>언어</translation>
    </message>
    <message>
        <source>As the system (%1)</source>
        <translation>시스템 설정대로 (%1)</translation>
    </message>
</context>
<context>
    <name>StatsPanel</name>
    <message>
        <source>Answer statistics</source>
        <translation>답변 통계</translation>
    </message>
    <message>
        <source>No statistics were recorded for this answer.</source>
        <translation>이 답변에는 기록된 통계가 없습니다.</translation>
    </message>
    <message>
        <source>Token arrival (ms since sent) by token index</source>
        <translation>토큰 도착 시각 (보낸 뒤 ms), 토큰 순서별</translation>
    </message>
    <message>
        <source>Chart of token arrival times</source>
        <translation>토큰 도착 시각 그래프</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>닫기</translation>
    </message>
</context>
<context>
    <name>StoreOpeningPane</name>
    <message>
        <source>Your chats could not be opened</source>
        <translation>대화를 열 수 없습니다</translation>
    </message>
    <message>
        <source>Opening your chats…</source>
        <translation>대화를 여는 중…</translation>
    </message>
    <message>
        <source>How far the chats have been opened</source>
        <translation>대화를 연 진행 정도</translation>
    </message>
    <message>
        <source>You can type meanwhile: a message is sent once your chats are open.</source>
        <translation>그동안 입력할 수 있습니다. 메시지는 대화가 열리면 보냅니다.</translation>
    </message>
    <message>
        <source>Try again</source>
        <translation>다시 시도</translation>
    </message>
    <message>
        <source>Try to open the chats again</source>
        <translation>대화를 다시 열어 보기</translation>
    </message>
</context>
<context>
    <name>ember::app::ConnectionsModel</name>
    <message>
        <source>The address must start with http:// or https://, for example http://192.168.1.20:8000/v1</source>
        <translation>주소는 http:// 또는 https://로 시작해야 합니다. 예: http://192.168.1.20:8000/v1</translation>
    </message>
    <message>
        <source>not tested yet</source>
        <translation>아직 확인하지 않음</translation>
    </message>
    <message>
        <source>testing…</source>
        <translation>확인하는 중…</translation>
    </message>
    <message>
        <source>The connection was removed.</source>
        <translation>연결을 삭제했습니다.</translation>
    </message>
</context>
</TS>
