package effectrpc_test

import (
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/protocol/effectrpc"
)

func ExampleMessage_MarshalJSON() {
	b, _ := json.Marshal(effectrpc.Message{Tag: effectrpc.TagRequest, ID: effectrpc.NumberID(0), Method: "orchestration.getThreadProjection", Payload: json.RawMessage(`{"threadId":"t1"}`)})
	fmt.Println(string(b))
	b, _ = json.Marshal(effectrpc.Message{Tag: effectrpc.TagAck, RequestID: effectrpc.StringID(3)})
	fmt.Println(string(b), effectrpc.StringID(3).Key() == effectrpc.NumberID(3).Key())
	// Output:
	// {"_tag":"Request","id":0,"tag":"orchestration.getThreadProjection","payload":{"threadId":"t1"},"headers":[]}
	// {"_tag":"Ack","requestId":"3"} true
}
