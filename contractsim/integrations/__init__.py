"""Contracts where agent builders already are: agent frameworks, MCP, HTTP (docs/integrations.md).

Each module imports its third-party packages itself (an optional extra each); this package imports
none of them, so ``import contractsim`` never needs them.

- :mod:`.langchain` guards LangChain tools (``pip install 'contractsim[langchain]'``);
- :mod:`.openai_agents` guards OpenAI Agents SDK function tools with a tool input guardrail
  (``pip install 'contractsim[openai-agents]'``);
- :mod:`.mcp_proxy` (``contractsim mcp-proxy``): an MCP server in front of a real one that refuses
  the calls the contract says fail, and :mod:`.serve` (``contractsim serve``): a folder of
  contracts over HTTP (both ``pip install 'contractsim[mcp]'``).
"""
