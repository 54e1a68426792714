"""Console forms (Flask-WTF: every form carries its CSRF token)."""
from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField, StringField
from wtforms.validators import DataRequired, Length


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=320)])
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)])


class EmptyForm(FlaskForm):
    """A form with only the CSRF token, for buttons that post."""


class OrgSwitchForm(FlaskForm):
    org_id = StringField(validators=[DataRequired(), Length(max=36)])


class LanguageForm(FlaskForm):
    language = StringField(validators=[DataRequired(), Length(max=5)])
    next = StringField(validators=[Length(max=2000)])
