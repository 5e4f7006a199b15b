package t3_test

import (
	"encoding/json"
	"fmt"

	"github.com/wireproof/wireproof/t3"
)

func ExampleRPCMessage_MarshalJSON() {
	b, _ := json.Marshal(t3.RPCMessage{Tag: t3.TagRequest, ID: t3.NumberID(0), Method: t3.MethodGetProjection, Payload: json.RawMessage(`{"threadId":"t1"}`)})
	fmt.Println(string(b))
	b, _ = json.Marshal(t3.RPCMessage{Tag: t3.TagAck, RequestID: t3.StringID(3)})
	fmt.Println(string(b), t3.StringID(3).Key() == t3.NumberID(3).Key())
	// Output:
	// {"_tag":"Request","id":0,"tag":"orchestration.getThreadProjection","payload":{"threadId":"t1"},"headers":[]}
	// {"_tag":"Ack","requestId":"3"} true
}
