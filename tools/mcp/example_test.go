package mcp_test

import (
	"fmt"

	"github.com/dsh-tools/dshd/tools/mcp"
)

func ExampleToolName() {
	fmt.Println(mcp.ToolName("github", "create_issue"))
	fmt.Println(mcp.ToolName("my server", "search.v2"))
	// Output:
	// mcp__github__create_issue
	// mcp__my_server__search_v2
}
