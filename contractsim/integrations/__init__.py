"""Contracts where agent builders already are: MCP, HTTP, agent frameworks.

Each module imports its third-party packages itself (``pip install 'contractsim[mcp]'`` …); this
package imports none of them, so ``import contractsim`` never needs them.

Modules: :mod:`.mcp_proxy` (``contractsim mcp-proxy``: an MCP server in front of a real one that
refuses the calls the contract says fail) and :mod:`.serve` (``contractsim serve``: a folder of
contracts over HTTP).
"""
