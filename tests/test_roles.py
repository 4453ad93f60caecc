"""The roles of vectrixdb.roles are what the package's own objects offer: a Vectrix and a principal's
view are Collections, SentenceEmbedder an Embedder, ChatWriter a ChatModel, the LLM cutter and the
context writer a Cutter and a NoteWriter. Checked without running anything: every member a protocol
declares is found on the object (inspect.getattr_static, so no property is evaluated)."""
import inspect

from vectrixdb import roles
from vectrixdb.chat.writer import ChatWriter
from vectrixdb.chunk_models import context_writer, llm_cutter
from vectrixdb.collection import Vectrix
from vectrixdb.embedding import Embedder, SentenceEmbedder


def members(protocol) -> set[str]:
    """The names a Protocol declares, its bases' included."""
    out = set()
    for cls in protocol.__mro__:
        if cls in (object,) or not getattr(cls, "_is_protocol", False) or cls.__name__ == "Protocol":
            continue
        out |= {n for n in vars(cls) if not n.startswith("_")} | set(getattr(cls, "__annotations__", {}))
    return out


def missing(obj, protocol) -> set[str]:
    found = set()
    for name in members(protocol):
        try:
            inspect.getattr_static(obj, name)
            found.add(name)
        except AttributeError:
            pass
    return members(protocol) - found


def test_the_protocols_declare_what_the_package_reads():
    assert members(roles.Searchable) == {"search", "documents"}
    assert members(roles.Collection) >= {"search", "documents", "name", "spaces", "embedder", "document", "chunks",
                                         "info"}
    assert members(roles.Embedder) == {"name", "dim", "encode"}
    assert members(roles.ChatModel) == {"ask"}


def test_the_package_objects_play_their_roles(tmp_path):
    db = Vectrix("roles", path=tmp_path)  # not created: nothing is read, nothing embedded
    view = db.as_principal({"groups": ["staff"]})
    assert missing(db, roles.Collection) == set()
    assert missing(view, roles.Collection) == set()
    assert missing(SentenceEmbedder(), roles.Embedder) == set()
    assert missing(ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m"), roles.ChatModel) == set()
    assert missing(llm_cutter(ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m")), roles.Cutter) == set()
    assert missing(context_writer(ChatWriter("http://127.0.0.1:9/v1/chat/completions", model="m")), roles.NoteWriter) == set()


def test_an_object_without_a_member_is_told_apart(tmp_path):
    class SearchOnly:
        def search(self, query, k=10):
            return []

    assert missing(SearchOnly(), roles.Searchable) == {"documents"}
    assert Embedder is roles.Embedder  # its old import path still works
    assert not isinstance(SearchOnly(), Embedder)  # get_embedder's run-time check
