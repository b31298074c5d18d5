"""The conversation: what a message means after the last exchanges, and how it is searched.

One mechanism, with no word list beyond English pronouns and function words:

- `said`: `Said`, one earlier exchange as the gates and this package read it;
- `reading`: whether a message leans on the exchanges before it, which one it continues,
  and what it reads as joined to it (the query, and the other readings);
- `search`: a follow-up searched as every reading of it, the rankings fused, and which
  memories a reply used (what the next turn carries on with).

The gate's decision read again with the exchange a follow-up continues is the decision
chain's last step, with the gates (`assistant.gates.followup`).

May import the leaves (`assistant.text`, `assistant.config`), the model runtime and
`memory`; not the gates, which read the conversation, nor anything above them. Nothing
is imported here.
"""
