"""The domain: the data model, its vocabulary, who may see what (access), the content policy, the write
ladder, audit and the usage ledger."""
