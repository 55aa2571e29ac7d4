"""Integrations with agent frameworks (docs/integrations.md), each an optional extra.

:mod:`.langchain` guards LangChain tools (``pip install 'contractsim[langchain]'``);
:mod:`.openai_agents` guards OpenAI Agents SDK function tools with a tool input guardrail
(``pip install 'contractsim[openai-agents]'``). Importing this package imports neither
framework: each module imports its own when it is imported.
"""
